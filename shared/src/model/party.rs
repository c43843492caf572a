//! Parties: individuals (`P…`) and entities (`E…`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shown::{Mask, Shown};
use crate::auth::PiiLevel;
use crate::records::Record;

/// An individual party, stored with the field names of `getParty` / `GET /v3/parties`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Party {
    #[serde(rename = "partyId")]
    pub id: String,
    #[serde(rename = "firstName")]
    pub first_name: String,
    #[serde(rename = "middleInitial")]
    pub middle_initial: String,
    #[serde(rename = "lastName")]
    pub last_name: String,
    pub domicile: String,
    #[serde(rename = "socialSecurityNumber")]
    pub ssn: String,
    pub dob: String,
    #[serde(rename = "primAddress1")]
    pub prim_address1: String,
    #[serde(rename = "primAddress2")]
    pub prim_address2: String,
    #[serde(rename = "primCity")]
    pub prim_city: String,
    #[serde(rename = "primState")]
    pub prim_state: String,
    #[serde(rename = "primZip")]
    pub prim_zip: String,
    #[serde(rename = "primCountry")]
    pub prim_country: String,
    #[serde(rename = "emailAddress")]
    pub email: String,
    #[serde(rename = "emailAddress2")]
    pub email2: String,
    pub phone: String,
    pub phone2: String,
    pub occupation: String,
    #[serde(rename = "associatedPerson")]
    pub associated_person: String,
    #[serde(rename = "empAddress1")]
    pub emp_address1: String,
    #[serde(rename = "empAddress2")]
    pub emp_address2: String,
    #[serde(rename = "empCity")]
    pub emp_city: String,
    #[serde(rename = "empState")]
    pub emp_state: String,
    #[serde(rename = "empZip")]
    pub emp_zip: String,
    #[serde(rename = "empCountry")]
    pub emp_country: String,
    #[serde(rename = "empName")]
    pub emp_name: String,
    #[serde(rename = "empStatus")]
    pub emp_status: String,
    pub invest_to: String,
    #[serde(rename = "currentAnnIncome")]
    pub current_ann_income: Option<i64>,
    #[serde(rename = "avgAnnIncome")]
    pub avg_ann_income: Option<i64>,
    #[serde(rename = "currentHouseholdIncome")]
    pub current_household_income: Option<i64>,
    #[serde(rename = "avgHouseholdIncome")]
    pub avg_household_income: Option<i64>,
    #[serde(rename = "householdNetworth")]
    pub household_networth: Option<i64>,
    #[serde(rename = "kycStatus")]
    pub kyc_status: String,
    #[serde(rename = "amlStatus")]
    pub aml_status: String,
    #[serde(rename = "amlDate")]
    pub aml_date: String,
    pub tags: String,
    pub notes: String,
    #[serde(rename = "esignStatus")]
    pub esign_status: String,
    #[serde(rename = "documentKey")]
    pub document_key: String,
    pub field1: String,
    pub field2: String,
    pub field3: String,
    pub archived: bool,
    pub deleted: bool,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

crate::records::record!(Party, "PARTY", id);

/// Fields every PII level sees in clear (the rest are `REDACTED` below `High`): CONTRACT's
/// account rule (the ID, the status fields, the dates), with part 2's status-like fields.
const PARTY_BASE: &[&str] = &[
    "partyId",
    "domicile",
    "empStatus",
    "associatedPerson",
    "kycStatus",
    "amlStatus",
    "amlDate",
    "esignStatus",
    "partystatus",
    "createdDate",
    "updatedDate",
];

impl Party {
    /// The record of `GET /v3/parties`: `kycStatus` casing, SSN and DOB `REDACTED`.
    pub fn view(&self, pii: PiiLevel) -> Map<String, Value> {
        super::object(&self.shown(pii))
    }

    /// [`Party::view`] serialized straight from the record (list pages).
    pub fn shown(&self, pii: PiiLevel) -> Shown<'_, Self> {
        Shown {
            rec: self,
            hide: &["archived", "deleted", "createdIpAddress"],
            status: Some(("partystatus", self.archived)),
            mask: Some(Mask {
                always: &["socialSecurityNumber", "dob"],
                base: PARTY_BASE,
                pii,
            }),
        }
    }

    /// The record of `getParty` and `searchParty` (OBSERVED.md): the list record without
    /// `partystatus`, SSN and DOB `REDACTED`.
    pub fn details(&self) -> Map<String, Value> {
        super::object(&Shown {
            status: None,
            ..self.shown(PiiLevel::High)
        })
    }

    /// Whether `needle` (already lower-cased) is part of the ID, a name, an email address
    /// or a phone number (`searchParty`).
    pub fn matches(&self, needle: &str) -> bool {
        let full = format!("{} {}", self.first_name, self.last_name);
        [
            &self.id,
            &self.first_name,
            &self.middle_initial,
            &self.last_name,
            &full,
            &self.email,
            &self.email2,
            &self.phone,
            &self.phone2,
        ]
        .iter()
        .any(|f| f.to_lowercase().contains(needle))
    }
}

/// An entity party, stored with the field names of `getEntity` / `GET /v3/entities`
/// (`KYCstatus` casing).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Entity {
    #[serde(rename = "partyId")]
    pub id: String,
    pub entity_name: String,
    pub entity_type: String,
    pub entity_desc: String,
    pub ein: String,
    pub domicile: String,
    pub prim_address1: String,
    pub prim_address2: String,
    pub prim_city: String,
    pub prim_state: String,
    pub prim_zip: String,
    pub prim_country: String,
    #[serde(rename = "emailAddress")]
    pub email: String,
    #[serde(rename = "emailAddress2")]
    pub email2: String,
    pub phone: String,
    pub phone2: String,
    pub total_assets: Option<i64>,
    #[serde(rename = "ownersAI")]
    pub owners_ai: String,
    #[serde(rename = "KYCstatus")]
    pub kyc_status: String,
    #[serde(rename = "AMLstatus")]
    pub aml_status: String,
    #[serde(rename = "AMLdate")]
    pub aml_date: String,
    pub formation_date: String,
    pub tags: String,
    pub notes: String,
    pub archived: bool,
    pub deleted: bool,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

crate::records::record!(Entity, "ENTITY", id);

impl Entity {
    /// The record of `GET /v3/entities` (scope `party.read.pii_high`: every field in clear).
    pub fn view(&self) -> Map<String, Value> {
        super::object(&self.shown())
    }

    /// [`Entity::view`] serialized straight from the record (list pages).
    pub fn shown(&self) -> Shown<'_, Self> {
        Shown {
            rec: self,
            hide: &["archived", "deleted", "createdIpAddress"],
            status: Some(("partystatus", self.archived)),
            mask: None,
        }
    }

    /// The record of `getEntity` and `searchEntity`: the list record without `partystatus`.
    pub fn details(&self) -> Map<String, Value> {
        super::object(&Shown {
            status: None,
            ..self.shown()
        })
    }

    /// Whether `needle` (already lower-cased) is part of the ID, the name, the EIN, an
    /// email address or a phone number (`searchEntity`).
    pub fn matches(&self, needle: &str) -> bool {
        [
            &self.id,
            &self.entity_name,
            &self.ein,
            &self.email,
            &self.email2,
            &self.phone,
            &self.phone2,
        ]
        .iter()
        .any(|f| f.to_lowercase().contains(needle))
    }
}

/// The record createParty, updateParty and updateEntity answer and send as their webhook.
#[derive(Serialize)]
pub struct StatusView<'a> {
    #[serde(rename = "partyId")]
    id: &'a str,
    #[serde(rename = "KYCstatus")]
    kyc_status: &'a str,
    #[serde(rename = "AMLstatus")]
    aml_status: &'a str,
}

/// A text parameter of a party or entity request and where the record stores it.
pub type Setter<R> = (&'static str, fn(&mut R, String));

/// What individual parties and entities share and change alike (KYC/AML decisions,
/// archiving, virtual deletes).
pub trait PartyRecord: Record + Clone + 'static {
    /// `kycStatus`, `amlStatus` and `amlDate`.
    fn statuses_mut(&mut self) -> (&mut String, &mut String, &mut String);
    fn archived_mut(&mut self) -> &mut bool;
    fn deleted_mut(&mut self) -> &mut bool;
    fn updated_mut(&mut self) -> &mut String;
    fn status_view(&self) -> StatusView<'_>;
    /// The request parameters both kinds store verbatim (statuses included), by name, and
    /// where each is stored.
    const CONTACT: &'static [Setter<Self>];

    /// Sets `kycStatus` when given and `amlStatus` with `amlDate` when given, at `now`.
    fn set_statuses(&mut self, kyc: Option<&str>, aml: Option<(&str, &str)>, now: &str) {
        let (k, a, d) = self.statuses_mut();
        if let Some(v) = kyc {
            *k = v.to_owned();
        }
        if let Some((v, date)) = aml {
            *a = v.to_owned();
            *d = date.to_owned();
        }
        *self.updated_mut() = now.to_owned();
    }
}

macro_rules! party_record {
    ($t:ty) => {
        impl PartyRecord for $t {
            const CONTACT: &'static [Setter<Self>] = &[
                ("primCountry", |r, v| r.prim_country = v),
                ("primAddress1", |r, v| r.prim_address1 = v),
                ("primCity", |r, v| r.prim_city = v),
                ("primState", |r, v| r.prim_state = v),
                ("primZip", |r, v| r.prim_zip = v),
                ("emailAddress", |r, v| r.email = v),
                ("domicile", |r, v| r.domicile = v),
                ("primAddress2", |r, v| r.prim_address2 = v),
                ("emailAddress2", |r, v| r.email2 = v),
                ("phone", |r, v| r.phone = v),
                ("phone2", |r, v| r.phone2 = v),
                ("notes", |r, v| r.notes = v),
                ("KYCstatus", |r, v| r.kyc_status = v),
                ("AMLstatus", |r, v| r.aml_status = v),
                ("AMLdate", |r, v| r.aml_date = v),
            ];
            fn statuses_mut(&mut self) -> (&mut String, &mut String, &mut String) {
                (&mut self.kyc_status, &mut self.aml_status, &mut self.aml_date)
            }
            fn archived_mut(&mut self) -> &mut bool {
                &mut self.archived
            }
            fn deleted_mut(&mut self) -> &mut bool {
                &mut self.deleted
            }
            fn updated_mut(&mut self) -> &mut String {
                &mut self.updated
            }
            fn status_view(&self) -> StatusView<'_> {
                StatusView {
                    id: &self.id,
                    kyc_status: &self.kyc_status,
                    aml_status: &self.aml_status,
                }
            }
        }
    };
}

party_record!(Party);
party_record!(Entity);

/// A party or entity named by its ID alone (createEntity's record, the delete and upload
/// webhooks).
#[derive(Serialize)]
pub struct PartyRef<'a> {
    #[serde(rename = "partyId")]
    pub id: &'a str,
}

/// updatePartyEntityArchivestatus's record and webhook: `archiveStatus` `1` or `0`.
#[derive(Serialize)]
pub struct ArchiveView<'a> {
    #[serde(rename = "partyId")]
    pub id: &'a str,
    #[serde(rename = "archiveStatus")]
    pub archive_status: &'a str,
}
