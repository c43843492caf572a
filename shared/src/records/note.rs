//! How an account's notes are read: one query over the client's note partition.

use crate::error::ApiError;
use crate::model::note::AccountNote;
use crate::records;
use crate::store::{Query, SkRange, Store};

/// The live notes of an account, oldest first.
pub async fn account_notes(store: &dyn Store, client: &str, account: &str) -> Result<Vec<AccountNote>, ApiError> {
    let mut q = Query::new(crate::store::Index::Table, records::partition::<AccountNote>(client));
    q.sk = SkRange::BeginsWith(format!("{account}#"));
    let mut out = Vec::new();
    for item in &records::query_all(store, q).await? {
        let n = records::from_item::<AccountNote>(item)?.rec;
        if !n.deleted {
            out.push(n);
        }
    }
    Ok(out)
}
