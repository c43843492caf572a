//! How accreditation requests are listed under their account: an entry per request, written
//! with it, so that one account's requests are one query (getAiRequest).

use crate::ids::sortable;
use crate::model::accreditation::AiRequest;
use crate::store::{Cond, Index, Item, Key, Query, Val, Write};

/// The partition listing one account's requests.
fn account_partition(client: &str, account_id: &str) -> String {
    format!("{client}#AIREQUEST@{account_id}")
}

/// The attribute of an account entry naming its request.
const ENTRY_REQUEST: &str = "airequestId";

/// The entry that lists a new request under its account (written with the request).
pub fn account_entry(client: &str, r: &AiRequest) -> Write {
    let mut item = Key::new(account_partition(client, &r.account_id), sortable(&r.id)).item();
    item.insert(ENTRY_REQUEST.into(), Val::S(r.id.clone()));
    Write::Put {
        item,
        cond: Some(Cond::NotExists),
    }
}

/// The query of one account's entries, newest request first.
pub fn account_entries(client: &str, account_id: &str) -> Query {
    let mut q = Query::new(Index::Table, account_partition(client, account_id));
    q.forward = false;
    q
}

/// The request an account entry names.
pub fn entry_request_id(item: &Item) -> Option<&str> {
    item.get(ENTRY_REQUEST).and_then(Val::as_str)
}
