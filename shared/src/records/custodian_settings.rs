//! How a client's custodian settings are stored: one item per client, JSON in `d`.

use crate::error::ApiError;
use crate::model::custodian_settings::CustodianSettings;
use crate::store::{Key, Store, Val, Write};

/// The key of a client's custodian settings.
pub fn key(client: &str) -> Key {
    Key::new(format!("{client}#SETTINGS"), "CUSTODIAN")
}

impl CustodianSettings {
    /// The write that stores these settings for a client.
    pub fn write(&self, client: &str) -> Write {
        let mut item = key(client).item();
        item.insert("d".into(), Val::S(serde_json::to_string(self).unwrap_or_default()));
        Write::Put { item, cond: None }
    }

    /// A client's settings (empty when never set).
    pub async fn load(store: &dyn Store, client: &str) -> Result<CustodianSettings, ApiError> {
        let Some(item) = store.get(&key(client)).await? else {
            return Ok(CustodianSettings::default());
        };
        let d = item.get("d").and_then(Val::as_str).unwrap_or("");
        serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt custodian settings", e))
    }
}
