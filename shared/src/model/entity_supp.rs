//! Entity supplements: the extra regulatory answers of an entity (`createEntitySupp`,
//! `updateEntitySupp`), one per entity, stored under the entity's ID with part 1's
//! webhook field names.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mask::REDACTED;
use crate::model::Stamps;

/// The supplement's own fields, in part 1's webhook order (after `entityID`). All free
/// text, stored as sent; `boSSN` is a social security number.
pub const FIELDS: &[&str] = &[
    "poliCont",
    "poliContDate",
    "CFTC",
    "CFTCrole",
    "boName",
    "boSSN",
    "planassetLimit",
    "insassetLimit",
    "notes",
    "TaxYEmonth",
    "USPerson",
    "BPpurchaser",
    "BPemployers",
    "BPaffiliates",
    "BPsponsor",
    "BankHoldingCo",
    "InvCompanyAct",
    "InvCompanyAct_individualowners",
    "InvCompanyAct_entityowners",
    "CFIUS",
    "PurchaserRep",
    "OtherOccupations",
];

/// A stored supplement: `entityID`, the [`FIELDS`] by name, and its dates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EntitySupp {
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// The [`FIELDS`] values, by name (absent ones are empty).
    pub fields: Map<String, Value>,
    #[serde(flatten)]
    pub stamps: Stamps,
    pub deleted: bool,
}

crate::records::record!(stamped EntitySupp, "ENTITYSUPP", entity_id);

impl EntitySupp {
    /// A field's stored value (empty when never set).
    pub fn get(&self, name: &str) -> &str {
        self.fields.get(name).and_then(Value::as_str).unwrap_or("")
    }

    /// `entityID` and every field in order, `boSSN` `REDACTED` when set (part 1,
    /// Conventions 8), then the given trailing dates.
    pub fn record(&self, trailing: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out = Vec::with_capacity(FIELDS.len() + 1 + trailing.len());
        out.push(("entityID".to_owned(), self.entity_id.clone()));
        for f in FIELDS {
            let v = self.get(f);
            let v = if *f == "boSSN" && !v.is_empty() { REDACTED } else { v };
            out.push(((*f).to_owned(), v.to_owned()));
        }
        out.extend(trailing.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        out
    }
}
