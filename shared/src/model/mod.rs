//! Records shared across endpoint groups. Each stores the fields as the spec names them;
//! the operations choose the casing each method answers with.

pub mod account;
pub mod accreditation;
pub mod ai_documents;
pub mod ats;
pub mod custodian_settings;
pub mod custody;
pub mod entity_supp;
pub mod escrow;
pub mod flags;
pub mod ids;
pub mod issuer;
pub mod kyc;
pub mod link;
pub mod market_hours;
pub mod note;
pub mod offering;
pub mod party;
pub mod payments;
pub mod shown;
pub mod subscription;
pub mod suitability;
pub mod trade;
pub mod validate;

pub use account::Account;
pub use issuer::{Issuer, IssuerAccount};
pub use link::Link;
pub use offering::Offering;
pub use party::{Entity, Party};

/// When and from where a record was created and last changed, in its stored order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Stamps {
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "createdIpAddress")]
    pub created_ip: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
    #[serde(rename = "updatedIpAddress")]
    pub updated_ip: String,
}

impl Stamps {
    /// A record created at `now` from `ip` (its `updatedDate` too; no change made yet).
    pub fn created(now: String, ip: String) -> Self {
        Stamps {
            created: now.clone(),
            created_ip: ip,
            updated: now,
            updated_ip: String::new(),
        }
    }

    /// A change at `now` from `ip`.
    pub fn change(&mut self, now: String, ip: String) {
        self.updated = now;
        self.updated_ip = ip;
    }
}

/// A view as a JSON object (list records, webhook payloads). Views have string keys, so
/// serializing them cannot fail.
pub fn object(view: &impl serde::Serialize) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(view) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

/// A record's stored fields without the `internal` ones.
pub fn fields_without(record: &impl serde::Serialize, internal: &[&str]) -> serde_json::Map<String, serde_json::Value> {
    object(&shown::Shown {
        rec: record,
        hide: internal,
        status: None,
        mask: None,
    })
}
