//! How issuers, their financial accounts and the accounts' custodian records are stored:
//! issuers and accounts as [`crate::records`], custodian records under one partition per
//! client, sorted by issuer.

use crate::error::ApiError;
use crate::ids::sortable;
use crate::model::ids::IssuerId;
use crate::model::issuer::{no_issuer, CustodianRecord, Issuer};
use crate::records::{self, Stored};
use crate::store::{Cond, Index, Key, Query, SkRange, Store, Val, Write};

/// The partition of a client's issuer custodian records; the sort key is
/// `<issuerId>#<sortable providerid>`.
pub fn custodian_key(client: &str, issuer_id: &str, providerid: &str) -> Key {
    Key::new(
        format!("{client}#ISSUERCUSTODIAN"),
        format!("{issuer_id}#{}", sortable(providerid)),
    )
}

/// The write that stores (or replaces) a custodian record of an issuer's financial account.
pub fn custodian_write(client: &str, issuer_id: &str, rec: &CustodianRecord) -> Write {
    let mut item = custodian_key(client, issuer_id, &rec.providerid).item();
    item.insert("d".into(), Val::S(serde_json::to_string(rec).unwrap_or_default()));
    Write::Put { item, cond: None }
}

/// The delete of one custodian record, failing (`ConditionFailed`) when it does not exist.
pub fn custodian_delete(client: &str, issuer_id: &str, providerid: &str) -> Write {
    Write::Delete {
        key: custodian_key(client, issuer_id, providerid),
        cond: Some(Cond::Exists),
    }
}

/// An issuer's custodian records, in `providerid` order (one query).
pub async fn custodians(store: &dyn Store, client: &str, issuer_id: &str) -> Result<Vec<CustodianRecord>, ApiError> {
    let mut q = Query::new(Index::Table, custodian_key(client, issuer_id, "").pk);
    q.sk = SkRange::BeginsWith(format!("{issuer_id}#"));
    let items = records::query_all(store, q).await?;
    let decode = |item: &crate::store::Item| {
        let d = item.get("d").and_then(Val::as_str).unwrap_or("");
        serde_json::from_str(d).map_err(|e| ApiError::internal_from("corrupt custodian record", e))
    };
    items.iter().map(decode).collect()
}

/// A live issuer of the client, or `136`.
pub async fn live_issuer(store: &dyn Store, client: &str, id: &IssuerId) -> Result<Stored<Issuer>, ApiError> {
    match records::load::<Issuer>(store, client, id.as_str()).await? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err(no_issuer()),
    }
}
