//! What the payments operations share.

use serde::Serialize;
use serde_json::Value;
use shared::model::ids::no_account;
use shared::model::Account;
use shared::records::{self, Stored};
use shared::{ApiError, Ctx};

/// A live account of the caller that is not archived, or `148` ("does not exist or is not
/// active").
pub async fn active_account(ctx: &Ctx, id: &str) -> Result<Stored<Account>, ApiError> {
    let account = records::live::<Account>(ctx, id, no_account).await?;
    if account.rec.archived {
        return Err(no_account());
    }
    Ok(account)
}

/// An operator answer: `view` with the `clientId` it concerns.
pub fn with_client(view: impl Serialize, client: &str) -> Value {
    let mut v = serde_json::to_value(view).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("clientId".into(), Value::from(client));
    }
    v
}
