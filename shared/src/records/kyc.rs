//! How manual KYC/AML requests are found by their `requestId`: an entry naming the
//! investor, written with the request.

use crate::error::ApiError;
use crate::store::{Cond, Key, Store, Val, Write};

/// The key of the entry naming the investor of a request ID (written with the request), so
/// that a request is found by its `requestId` with one read.
pub fn request_ref_key(client: &str, request_id: &str) -> Key {
    Key::new(format!("{client}#KYCREQUESTID"), request_id)
}

const REF_INVESTOR: &str = "investorId";

/// The entry naming `investor` as the owner of `request_id`.
pub fn request_ref(client: &str, request_id: &str, investor: &str) -> Write {
    let mut item = request_ref_key(client, request_id).item();
    item.insert(REF_INVESTOR.into(), Val::S(investor.to_owned()));
    Write::Put {
        item,
        cond: Some(Cond::NotExists),
    }
}

/// The investor whose manual request has this `requestId`, if any.
pub async fn investor_of_request(
    store: &dyn Store,
    client: &str,
    request_id: &str,
) -> Result<Option<String>, ApiError> {
    Ok(store
        .get(&request_ref_key(client, request_id))
        .await?
        .and_then(|i| i.get(REF_INVESTOR).and_then(Val::as_str).map(str::to_owned)))
}
