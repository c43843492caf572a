//! How links are stored beside their records: the markers that keep one live link per
//! (account, related entry) pair and one primary party per account, and the reads of them.

use crate::error::ApiError;
use crate::model::{Link, Party};
use crate::records::load;
use crate::store::{Index, Key, Query, SkRange, Store, Val};

/// The marker of a link between an account and a related entry (one live link per pair).
pub fn pair_key(client: &str, account: &str, related: &str) -> Key {
    Key::new(format!("{client}#LINKPAIR"), format!("{account}#{related}"))
}

/// The marker of an account's primary party (at most one).
pub fn primary_key(client: &str, account: &str) -> Key {
    Key::new(format!("{client}#PRIMARY"), account)
}

/// The account's primary party, when it has one that is live (not deleted, not archived):
/// read from the primary marker createLink writes (`primary_key`), the link it names and the
/// party. `None` means `135` to operations that need one ([`crate::model::link::no_primary_party`]).
pub async fn primary_party(store: &dyn Store, client: &str, account: &str) -> Result<Option<String>, ApiError> {
    let Some(marker) = store.get(&primary_key(client, account)).await? else {
        return Ok(None);
    };
    let party = match marker.get("relatedEntry").and_then(Val::as_str) {
        Some(p) => p.to_owned(),
        None => {
            let link_id = marker.get("linkId").and_then(Val::as_str).unwrap_or("");
            match load::<Link>(store, client, link_id).await? {
                Some(l) if !l.rec.deleted && l.rec.primary == "1" && l.rec.first_entry == account => {
                    l.rec.related_entry
                }
                _ => return Ok(None),
            }
        }
    };
    match load::<Party>(store, client, &party).await? {
        Some(p) if !p.rec.deleted && !p.rec.archived => Ok(Some(party)),
        _ => Ok(None),
    }
}

/// The IDs of an account's live links (where it is the `firstEntry`), in numeric order: read
/// from the pair markers, one query.
pub async fn account_link_ids(store: &dyn Store, client: &str, account: &str) -> Result<Vec<String>, ApiError> {
    let mut q = Query::new(Index::Table, pair_key(client, account, "").pk);
    q.sk = SkRange::BeginsWith(format!("{account}#"));
    let items = super::query_all(store, q).await?;
    let mut ids: Vec<String> = items
        .iter()
        .filter_map(|i| i.get("linkId").and_then(Val::as_str).map(str::to_owned))
        .collect();
    ids.sort_by_key(|id| (id.len(), id.clone()));
    Ok(ids)
}
