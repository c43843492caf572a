//! How records of every resource are stored: one partition per client and kind, keyed by
//! ID; `gsi1` lists live records and `gsi2` every record, both newest first by
//! `createdDate` then ID; per-client counters kept in the same transaction as the writes
//! give `totalRecords` without reading the list.

pub mod accreditation;
pub mod ai_documents;
pub mod ats;
pub mod custodian_settings;
pub mod custody;
pub mod escrow;
pub mod flags;
pub mod issuer;
pub mod kyc;
pub mod link;
pub mod note;
pub mod offering;
pub mod party;
pub mod payments;
pub mod subscription;
pub mod trade;

use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::ApiError;
use crate::ids::sortable;
use crate::store::{Cond, Item, Key, Store, Update, Val, Write};

/// A stored resource record.
pub trait Record: Serialize + DeserializeOwned + Send + Sync {
    /// The kind, part of every key (`PARTY`, `ACCOUNT`, ...).
    const KIND: &'static str;
    fn id(&self) -> &str;
    /// `YYYY-MM-DD HH:MM:SS`.
    fn created(&self) -> &str;
    /// Virtually deleted (part 1, §Conventions 9).
    fn deleted(&self) -> bool;
    /// Takes values a record keeps as top-level attributes of its item, outside the JSON
    /// in `d` (counters other writes change with one conditional update, such as an
    /// offering's `remainingShares`); called by [`from_item`]. Records with such attributes
    /// are written with [`insert_with`] and [`update_in_place`], never [`replace`] (a put
    /// would overwrite them).
    fn read_attrs(&mut self, _item: &Item) {}
}

/// Implements [`Record`] for `$ty` of kind `$kind`, its ID in the field `$id` (a path), with the
/// `created` (`stamped`: in its [`Stamps`](crate::model::Stamps)) and `deleted` fields every
/// stored record keeps.
macro_rules! record {
    ($ty:ty, $kind:literal, $($id:ident).+) => {
        $crate::records::record!($ty, $kind, $($id).+; created);
    };
    (stamped $ty:ty, $kind:literal, $($id:ident).+) => {
        $crate::records::record!($ty, $kind, $($id).+; stamps.created);
    };
    ($ty:ty, $kind:literal, $($id:ident).+; $($created:ident).+) => {
        impl $crate::records::Record for $ty {
            const KIND: &'static str = $kind;
            fn id(&self) -> &str {
                &self.$($id).+
            }
            fn created(&self) -> &str {
                &self.$($created).+
            }
            fn deleted(&self) -> bool {
                self.deleted
            }
        }
    };
}
pub(crate) use record;

/// An item holding `rec` as JSON in `d`, at `version`.
pub(crate) fn json_item<T: serde::Serialize>(key: Key, rec: &T, version: i64) -> Result<Item, ApiError> {
    let mut item = key.item();
    let json = serde_json::to_string(rec).map_err(|e| ApiError::internal_from("record does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    item.insert("v".into(), Val::from(version));
    Ok(item)
}

/// The put of a versioned record: new (`before` none) or over the version read.
pub(crate) fn versioned_put(item: Item, before: Option<i64>) -> Write {
    let cond = match before {
        None => Cond::NotExists,
        Some(v) => Cond::Cmp("v".into(), crate::store::CmpOp::Eq, Val::from(v)),
    };
    Write::Put { item, cond: Some(cond) }
}

/// The put of a record kept as JSON: new (`before` none: the key must be free) or over the
/// version read.
pub(crate) fn put_json<T: serde::Serialize>(key: Key, rec: &T, before: Option<i64>) -> Result<Write, ApiError> {
    Ok(versioned_put(json_item(key, rec, before.map_or(1, |v| v + 1))?, before))
}

/// The version a record written over `before` gets.
pub(crate) fn next_version(before: Option<i64>) -> i64 {
    before.map_or(1, |v| v + 1)
}

/// The delete of a versioned record, if it is still the version read.
pub(crate) fn versioned_delete(key: Key, version: i64) -> Write {
    Write::Delete {
        key,
        cond: Some(Cond::Cmp("v".into(), crate::store::CmpOp::Eq, Val::from(version))),
    }
}

/// A record an account or a party holds at most one of, kept as JSON and versioned under
/// `{client}#{KIND}` / the owner's ID (an agreement on file, a supplement, a linked card).
pub trait Owned: Serialize + DeserializeOwned {
    /// The partition's kind.
    const KIND: &'static str;
    /// The ID of the account or party that holds it.
    fn owner(&self) -> &str;
}

pub fn owned_key<R: Owned>(client: &str, owner: &str) -> Key {
    Key::new(format!("{client}#{}", R::KIND), owner)
}

/// The record of kind `R` that `owner` holds, with its version.
pub async fn owned<R: Owned>(store: &dyn Store, client: &str, owner: &str) -> Result<Option<Stored<R>>, ApiError> {
    get_json(store, &owned_key::<R>(client, owner)).await
}

/// Writes `rec` as new (`before` none: fails when its owner holds one) or over the version
/// read.
pub fn owned_put<R: Owned>(client: &str, rec: &R, before: Option<i64>) -> Result<Write, ApiError> {
    put_json(owned_key::<R>(client, rec.owner()), rec, before)
}

/// Deletes the record read, if it is still that version.
pub fn owned_delete<R: Owned>(client: &str, before: &Stored<R>) -> Write {
    versioned_delete(owned_key::<R>(client, before.rec.owner()), before.version)
}

/// A record kept as JSON in `d`, with its version.
pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
    store: &dyn Store,
    key: &Key,
) -> Result<Option<Stored<T>>, ApiError> {
    match store.get(key).await? {
        Some(item) => decode(&item, "corrupt record").map(Some),
        None => Ok(None),
    }
}

/// The partition holding a client's records of one kind.
pub fn partition<R: Record>(client: &str) -> String {
    format!("{client}#{}", R::KIND)
}

pub fn key<R: Record>(client: &str, id: &str) -> Key {
    Key::new(partition::<R>(client), id)
}

/// The key of a client's record counters for one kind (`live`, `all`).
pub fn counter_key<R: Record>(client: &str) -> Key {
    Key::new(format!("{client}#COUNT"), R::KIND)
}

/// The sort key of the list indexes: newest first when read backwards.
pub fn list_sort_key(created: &str, id: &str) -> String {
    format!("{created}#{}", sortable(id))
}

/// A record as read, with the version its next write is conditioned on.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored<R> {
    pub rec: R,
    pub version: i64,
}

fn to_item<R: Record>(client: &str, r: &R, version: i64) -> Result<Item, ApiError> {
    let mut item = key::<R>(client, r.id()).item();
    item.insert("v".into(), Val::from(version));
    let json = serde_json::to_string(r).map_err(|e| ApiError::internal_from("record does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    let part = partition::<R>(client);
    let sk = list_sort_key(r.created(), r.id());
    if !r.deleted() {
        item.insert("gsi1pk".into(), Val::S(part.clone()));
        item.insert("gsi1sk".into(), Val::S(sk.clone()));
    }
    item.insert("gsi2pk".into(), Val::S(part));
    item.insert("gsi2sk".into(), Val::S(sk));
    Ok(item)
}

/// Decodes a stored record.
pub fn from_item<R: Record>(item: &Item) -> Result<Stored<R>, ApiError> {
    let mut stored = decode::<R>(item, "corrupt record")?;
    stored.rec.read_attrs(item);
    Ok(stored)
}

/// Decodes the JSON an item keeps in `d`, with its version `v`; `corrupt` names what failed
/// to decode in the internal error.
pub fn decode<T: DeserializeOwned>(item: &Item, corrupt: &'static str) -> Result<Stored<T>, ApiError> {
    let d = item.get("d").and_then(Val::as_str).unwrap_or("");
    let rec = serde_json::from_str(d).map_err(|e| ApiError::internal_from(corrupt, e))?;
    let version = item
        .get("v")
        .and_then(Val::as_num)
        .and_then(|v| i64::try_from(v).ok())
        .unwrap_or(0);
    Ok(Stored { rec, version })
}

/// Reads one record of the client (deleted ones included).
pub async fn load<R: Record>(store: &dyn Store, client: &str, id: &str) -> Result<Option<Stored<R>>, ApiError> {
    match store.get(&key::<R>(client, id)).await? {
        Some(item) => from_item(&item).map(Some),
        None => Ok(None),
    }
}

/// The writes that insert a new record and count it.
pub fn insert<R: Record>(client: &str, r: &R) -> Result<Vec<Write>, ApiError> {
    insert_with(client, r, Vec::new())
}

/// [`insert`], with top-level attributes beside the record (see [`Record::read_attrs`]).
pub fn insert_with<R: Record>(client: &str, r: &R, attrs: Vec<(String, Val)>) -> Result<Vec<Write>, ApiError> {
    let counts = vec![
        Update::Add("live".into(), Decimal::ONE),
        Update::Add("all".into(), Decimal::ONE),
    ];
    let mut item = to_item(client, r, 1)?;
    item.extend(attrs);
    Ok(vec![
        Write::Put {
            item,
            cond: Some(Cond::NotExists),
        },
        Write::Update {
            key: counter_key::<R>(client),
            ops: counts,
            cond: None,
        },
    ])
}

/// The writes that replace a stored record (`before` as read), keeping the counters right
/// when it is deleted. The put is conditioned on the version read, so a concurrent change
/// makes it fail (`ConditionFailed`) rather than be lost.
/// The change of the client's live-record counter when a write deletes or restores a record.
fn live_count_change<R: Record>(client: &str, before: &Stored<R>, after: &R) -> Option<Write> {
    if before.rec.deleted() == after.deleted() {
        return None;
    }
    let delta = if after.deleted() {
        Decimal::NEGATIVE_ONE
    } else {
        Decimal::ONE
    };
    Some(Write::Update {
        key: counter_key::<R>(client),
        ops: vec![Update::Add("live".into(), delta)],
        cond: None,
    })
}

pub fn replace<R: Record>(client: &str, before: &Stored<R>, after: &R) -> Result<Vec<Write>, ApiError> {
    let cond = Cond::Cmp("v".into(), crate::store::CmpOp::Eq, Val::from(before.version));
    let mut writes = vec![Write::Put {
        item: to_item(client, after, before.version + 1)?,
        cond: Some(cond),
    }];
    writes.extend(live_count_change(client, before, after));
    Ok(writes)
}

/// Like [`replace`], as one update that sets the record's JSON, version and list-index keys
/// and leaves every other attribute of the item alone (those [`Record::read_attrs`] reads,
/// which other writes change concurrently). `ops` are applied in the same update, and
/// `cond` is required beside the version check.
pub fn update_in_place<R: Record>(
    client: &str,
    before: &Stored<R>,
    after: &R,
    ops: Vec<Update>,
    cond: Option<Cond>,
) -> Result<Vec<Write>, ApiError> {
    let item = to_item(client, after, before.version + 1)?;
    let mut all_ops = ops;
    for attr in ["v", "d", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"] {
        match item.get(attr) {
            Some(v) => all_ops.push(Update::Set(attr.into(), v.clone())),
            None => all_ops.push(Update::Remove(attr.into())),
        }
    }
    let version = Cond::Cmp("v".into(), crate::store::CmpOp::Eq, Val::from(before.version));
    let cond = match cond {
        Some(c) => Cond::And(vec![version, c]),
        None => version,
    };
    let mut writes = vec![Write::Update {
        key: key::<R>(client, after.id()),
        ops: all_ops,
        cond: Some(cond),
    }];
    writes.extend(live_count_change(client, before, after));
    Ok(writes)
}

/// The check that a record is still as read (same version), for a transaction that
/// depends on it without writing it: a concurrent change fails the transaction.
pub fn unchanged<R: Record>(client: &str, before: &Stored<R>) -> Write {
    Write::Check {
        key: key::<R>(client, before.rec.id()),
        cond: Cond::Cmp("v".into(), crate::store::CmpOp::Eq, Val::from(before.version)),
    }
}

/// The number of live (or all) records of a kind.
pub async fn count<R: Record>(store: &dyn Store, client: &str, include_deleted: bool) -> Result<u64, ApiError> {
    let attr = if include_deleted { "all" } else { "live" };
    let n = store
        .get(&counter_key::<R>(client))
        .await?
        .and_then(|i| i.get(attr).and_then(Val::as_num));
    Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
}

/// A list record's view serialized once, to be written into the reply as it is. Views have
/// string keys, so serializing them cannot fail.
pub fn raw(view: &impl Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(view).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// One page of a list resource, rendered, with `totalRecords`.
struct ListPage {
    records: Vec<Box<RawValue>>,
    total: usize,
    offset: usize,
}

impl ListPage {
    /// The list response: the records under `key` and `pagination`, part 1's zero-based
    /// first and last index returned.
    fn into_reply(self, key: &str) -> crate::Reply {
        let end = (self.offset + self.records.len()).saturating_sub(1);
        let pagination = serde_json::json!({"totalRecords": self.total, "startIndex": self.offset, "endIndex": end});
        crate::Reply::ok()
            .with_raw(key, raw(&self.records))
            .with_value("pagination", pagination)
    }
}

impl From<crate::list::ListError> for ApiError {
    fn from(e: crate::list::ListError) -> Self {
        ApiError::Resource {
            http: e.http_status(),
            code: e.status_code(),
            desc: e.desc(),
        }
    }
}

/// A list endpoint's reply: the query `spec` reads from `pairs`, then one page of the
/// caller's records of one kind, each rendered by `view` (which may read the query), under
/// `key` with `pagination`.
pub async fn list<R: Record>(
    ctx: &crate::Ctx,
    pairs: &[(String, String)],
    spec: &crate::list::ListSpec,
    key: &str,
    view: impl Fn(&R, &crate::list::ListQuery) -> Box<RawValue>,
) -> Result<crate::Reply, ApiError> {
    let q = crate::list::parse(pairs, spec).map_err(|e| list_refusal(e, key))?;
    let page = list_page::<R>(ctx.store(), ctx.client_id(), &q, key, |r| view(r, &q)).await?;
    Ok(page.into_reply(key))
}

/// A list's refusal. A `limit` or `offset` that is not an integer (`1422`) or out of range
/// (`239`) carries an empty array under the list's key, as the incumbent's clients read it
/// (OBSERVED-MORE, cross-cutting 3).
fn list_refusal(e: crate::list::ListError, key: &str) -> ApiError {
    use crate::list::ListError;
    match e {
        ListError::NotInteger(_) | ListError::OutOfRange(_) => {
            empty_list_refusal(key, e.status_code(), e.http_status(), e.desc())
        }
        e => e.into(),
    }
}

/// A list refusal carrying an empty array under the list's `key` (see [`list_refusal`]).
pub fn empty_list_refusal(key: &str, code: &'static str, http: u16, desc: String) -> ApiError {
    ApiError::CodedBody {
        code,
        desc,
        http: Some(http),
        body: serde_json::Map::from_iter([(key.to_owned(), serde_json::Value::Array(Vec::new()))]),
    }
}

/// Runs a list query over a client's records of one kind. Sorted by the indexed field
/// (`createdDate`, or `executionTime`) with no filter, or as part 1's keyset page of the ATS
/// lists (`executionTime` ascending from a lower bound), it reads the list index and stops
/// after the page, with `totalRecords` from the counters (every record of the list: a keyset
/// bound is a cursor, and its last page may be empty); otherwise it reads the client's own
/// partition (never the table), filters and sorts the rendered records.
async fn list_page<R: Record>(
    store: &dyn Store,
    client: &str,
    q: &crate::list::ListQuery,
    key: &str,
    view: impl Fn(&R) -> Box<RawValue>,
) -> Result<ListPage, ApiError> {
    use crate::store::{Index, Query, SkRange};
    let keyset = q.keyset();
    if (!q.has_filters() && q.sort.0 == q.indexed) || keyset.is_some() {
        let total = count::<R>(store, client, q.deleted).await? as usize;
        if keyset.is_none() {
            q.check_offset(total).map_err(|e| list_refusal(e, key))?;
        }
        let index = if q.deleted { Index::Gsi2 } else { Index::Gsi1 };
        let mut query = Query::new(index, partition::<R>(client));
        query.forward = q.sort.1 == crate::list::Dir::Asc;
        if let Some((bound, inclusive)) = keyset {
            // The index's sort key is `{value}#{id}`: past every ID of the bound's value, or from the first.
            let from = if inclusive {
                format!("{bound}#")
            } else {
                format!("{bound}#~")
            };
            query.sk = SkRange::Between(from, "~".into());
        }
        let mut skip = q.offset;
        let mut records = Vec::with_capacity(q.limit);
        loop {
            query.limit = (skip + q.limit - records.len()).min(1000) as u32;
            let page = store.query(&query).await?;
            for item in &page.items {
                if skip > 0 {
                    skip -= 1;
                } else if records.len() < q.limit {
                    records.push(view(&from_item::<R>(item)?.rec));
                }
            }
            match page.next {
                Some(next) if records.len() < q.limit => query.start = Some(next),
                _ => break,
            }
        }
        return Ok(ListPage {
            records,
            total,
            offset: q.offset,
        });
    }
    let mut query = Query::new(Index::Table, partition::<R>(client));
    let mut all = Vec::new();
    loop {
        let page = store.query(&query).await?;
        for item in &page.items {
            let rec = from_item::<R>(item)?.rec;
            if q.deleted || !rec.deleted() {
                let v = view(&rec);
                let fields = serde_json::from_str(v.get()).map_err(|e| ApiError::internal_from("a list view", e))?;
                if q.matches(&fields) {
                    all.push((fields, v));
                }
            }
        }
        match page.next {
            Some(next) => query.start = Some(next),
            None => break,
        }
    }
    q.check_offset(all.len()).map_err(|e| list_refusal(e, key))?;
    all.sort_by(|a, b| q.cmp(&a.0, &b.0));
    let total = all.len();
    let records = all.into_iter().skip(q.offset).take(q.limit).map(|(_, v)| v).collect();
    Ok(ListPage {
        records,
        total,
        offset: q.offset,
    })
}

/// Every item `q` finds, page after page.
pub async fn query_all(store: &dyn Store, mut q: crate::store::Query) -> Result<Vec<Item>, crate::store::StoreError> {
    let mut items = Vec::new();
    loop {
        let page = store.query(&q).await?;
        items.extend(page.items);
        match page.next {
            Some(next) => q.start = Some(next),
            None => return Ok(items),
        }
    }
}

/// Every client's records in a cross-client index partition (`pk`, such as a batch's due
/// index), oldest first: (client, record). Each item's own partition is `{client}{suffix}`;
/// an item of another partition is passed over. One index query a page of 500.
pub async fn every_client<R: DeserializeOwned>(
    store: &dyn Store,
    pk: &str,
    suffix: &str,
    corrupt: &'static str,
) -> Result<Vec<(String, Stored<R>)>, ApiError> {
    let mut q = crate::store::Query::new(crate::store::Index::Gsi1, pk);
    q.limit = 500;
    let mut out = Vec::new();
    for item in query_all(store, q).await? {
        let pk = item.get("pk").and_then(Val::as_str).unwrap_or("");
        if let Some(client) = pk.strip_suffix(suffix) {
            out.push((client.to_owned(), decode(&item, corrupt)?));
        }
    }
    Ok(out)
}

/// The caller's live records of one kind, newest first (`createdDate`, then ID), at most
/// `max`: the live-list index read backwards, one page per 1000.
pub async fn newest<R: Record>(ctx: &crate::Ctx, max: usize) -> Result<Vec<R>, ApiError> {
    let mut q = crate::store::Query::new(crate::store::Index::Gsi1, partition::<R>(ctx.client_id()));
    q.forward = false;
    let mut out = Vec::new();
    loop {
        q.limit = (max - out.len()).min(1000) as u32;
        let page = ctx.store().query(&q).await?;
        for item in &page.items {
            out.push(from_item::<R>(item)?.rec);
        }
        match page.next {
            Some(next) if out.len() < max => q.start = Some(next),
            _ => return Ok(out),
        }
    }
}

/// A record of the caller that is not deleted, or the error `missing` gives.
pub async fn live<R: Record>(
    ctx: &crate::Ctx,
    id: &str,
    missing: impl FnOnce() -> ApiError,
) -> Result<Stored<R>, ApiError> {
    match load::<R>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) if !s.rec.deleted() => Ok(s),
        _ => Err(missing()),
    }
}

/// A live account of the caller that is not archived, or `148` ("does not exist or is not
/// active"): the accounts payments and the ATS act for.
pub async fn active_account(ctx: &crate::Ctx, id: &str) -> Result<Stored<crate::model::Account>, ApiError> {
    let account = live::<crate::model::Account>(ctx, id, crate::model::ids::no_account).await?;
    if account.rec.archived {
        return Err(crate::model::ids::no_account());
    }
    Ok(account)
}
