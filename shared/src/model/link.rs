//! Links: a party or account tied to an account with a role.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::records::Record;

/// The roles part 2 allows; anything else is rejected.
pub const LINK_TYPES: &[&str] = &[
    "owner",
    "secondary",
    "manager",
    "member",
    "officer",
    "director",
    "spouse",
    "beneficiary",
    "trustee",
    "custodian",
    "parentco",
    "subsidiary",
    "other",
    "acgroup",
    "advisor",
    "attorney",
    "proxy",
];

/// What a link's related entry may be.
pub const RELATED_TYPES: &[&str] = &["Account", "IndivACParty", "EntityACParty"];

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Link {
    pub id: String,
    #[serde(rename = "firstEntryType")]
    pub first_entry_type: String,
    #[serde(rename = "firstEntry")]
    pub first_entry: String,
    #[serde(rename = "relatedEntryType")]
    pub related_entry_type: String,
    #[serde(rename = "relatedEntry")]
    pub related_entry: String,
    #[serde(rename = "linkType")]
    pub link_type: String,
    pub notes: String,
    #[serde(rename = "primary_value")]
    pub primary: String,
    pub deleted: bool,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

impl Record for Link {
    const KIND: &'static str = "LINK";
    fn id(&self) -> &str {
        &self.id
    }
    fn created(&self) -> &str {
        &self.created
    }
    fn deleted(&self) -> bool {
        self.deleted
    }
}

impl Link {
    /// The link record of `getLink` and `GET /v3/links`.
    pub fn view(&self) -> Map<String, Value> {
        let mut m = match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        m.shift_remove("deleted");
        m
    }
}

/// The marker of a link between an account and a related entry (one live link per pair).
pub fn pair_key(client: &str, account: &str, related: &str) -> crate::store::Key {
    crate::store::Key::new(format!("{client}#LINKPAIR"), format!("{account}#{related}"))
}

/// The marker of an account's primary party (at most one).
pub fn primary_key(client: &str, account: &str) -> crate::store::Key {
    crate::store::Key::new(format!("{client}#PRIMARY"), account)
}
