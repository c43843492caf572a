//! What the party and entity operations share: the flag checks (`775`, `776`) committed
//! with the state change, webhook payloads made of a response record, the one-record read
//! and the virtual delete, reading a client's whole partition of one kind, the small
//! parameter forms of the method-style reads, and the billing entries of billed operations.

use shared::model::flags::FlagKind;
use shared::model::ids::no_party;
use shared::model::party::{PartyRecord, PartyRef, Setter};
use shared::records::flags::FlagItems;
use shared::records::{self, Record};
use shared::store::{Index, Query, Write};
use shared::webhooks::{ids_event, record_event, view_event};
use shared::{ApiError, Ctx, Params, Plan, Reply};

/// `106` for a required parameter that is blank, or absent when `creating`.
pub fn require<'a>(p: &Params, names: impl IntoIterator<Item = &'a &'a str>, creating: bool) -> Result<(), ApiError> {
    for name in names {
        match p.opt(&[name])? {
            None if !creating => {}
            Some(v) if !v.trim().is_empty() => {}
            _ => return Err(ApiError::missing(name)),
        }
    }
    Ok(())
}

/// Sets the contact parameters and those of `own` the request sends (and only those),
/// verbatim.
pub fn apply_texts<R: PartyRecord>(p: &Params, r: &mut R, own: &[Setter<R>]) -> Result<(), ApiError> {
    for (name, set) in R::CONTACT.iter().chain(own) {
        if let Some(v) = p.opt(&[name])? {
            set(r, v);
        }
    }
    Ok(())
}

/// The flag checks of one request: each a transaction item with the error it stands for.
#[derive(Clone, Default)]
pub struct Checks(Vec<(Write, ApiError)>);

impl Checks {
    /// The plan with the flag checks in its transaction: a flagged value fails it with its
    /// code (SSN checks first) and nothing is written.
    pub fn onto<T>(&self, plan: Plan<T>) -> Plan<T> {
        self.0
            .iter()
            .fold(plan, |plan, (w, e)| plan.check(w.clone(), e.clone()))
    }

    /// Adds the check of a value sent for `kind` (an empty value is never flagged; a
    /// value already checked is not checked twice).
    pub fn add(mut self, kind: FlagKind, raw: Option<&str>) -> Self {
        let Some(check) = raw.and_then(|r| kind.check(r)) else {
            return self;
        };
        if self.0.iter().any(|(w, _)| w.key() == check.key()) {
            return self;
        }
        let err = match kind {
            FlagKind::Ssn => ApiError::coded("775", "Social security number is flagged and cannot be used"),
            FlagKind::Email => ApiError::coded("776", "Email address is flagged and cannot be used"),
        };
        self.0.push((check, err));
        self
    }

    /// The checks of the SSN and email parameters a party or entity request sends.
    pub fn of(p: &Params, ssn: Option<&str>, emails: &[&str]) -> Result<Self, ApiError> {
        let mut checks = Checks::default();
        if let Some(name) = ssn {
            checks = checks.add(FlagKind::Ssn, p.opt(&[name])?.as_deref());
        }
        for name in emails {
            checks = checks.add(FlagKind::Email, p.opt(&[name])?.as_deref());
        }
        Ok(checks)
    }
}

/// The insert of a new record whose failed condition (the record exists already) answers
/// `exists`.
pub fn insert_once<R: Record>(client: &str, r: &R, exists: ApiError) -> Result<Plan<()>, ApiError> {
    let mut writes = records::insert(client, r)?.into_iter();
    let put = writes
        .next()
        .ok_or_else(|| ApiError::internal("an insert writes the record first"))?;
    Ok(Plan::answer(()).check(put, exists).writes(writes))
}

/// Every record of one kind the caller has, deleted ones included (the client's own
/// partition: the cost grows with that client's records only).
pub async fn all<R: Record>(ctx: &Ctx) -> Result<Vec<R>, ApiError> {
    let q = Query::new(Index::Table, records::partition::<R>(ctx.client_id()));
    let items = records::query_all(ctx.store(), q).await?;
    items
        .iter()
        .map(|item| Ok(records::from_item::<R>(item)?.rec))
        .collect()
}

/// Newest first (`createdDate`, then ID), as the lists order.
pub fn newest_first<R: Record>(a: &R, b: &R) -> std::cmp::Ordering {
    records::list_sort_key(b.created(), b.id()).cmp(&records::list_sort_key(a.created(), a.id()))
}

/// Most records a search answers.
const SEARCH_MAX: usize = 1000;

/// A record the keyword searches find: what matches, and the record they answer.
pub trait Searchable: Record {
    fn matches(&self, needle: &str) -> bool;
    fn details(&self) -> serde_json::Map<String, serde_json::Value>;
}

impl Searchable for shared::model::Party {
    fn matches(&self, needle: &str) -> bool {
        shared::model::Party::matches(self, needle)
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        shared::model::Party::details(self)
    }
}

impl Searchable for shared::model::Entity {
    fn matches(&self, needle: &str) -> bool {
        shared::model::Entity::matches(self, needle)
    }
    fn details(&self) -> serde_json::Map<String, serde_json::Value> {
        shared::model::Entity::details(self)
    }
}

/// A keyword search (`searchParty`, `searchEntity`): live records whose fields contain
/// `searchKeyword` (case-insensitive), newest first, at most [`SEARCH_MAX`], under `key`.
pub async fn search<R: Searchable>(ctx: &Ctx, p: &Params, key: &str) -> Result<Reply, ApiError> {
    let needle = keyword(p)?;
    let mut found: Vec<R> = all::<R>(ctx)
        .await?
        .into_iter()
        .filter(|r| !r.deleted() && r.matches(&needle))
        .collect();
    found.sort_by(newest_first);
    found.truncate(SEARCH_MAX);
    fire_party_ids(ctx, found.iter().map(|r| r.id())).await?;
    let records = found.iter().map(|r| serde_json::Value::Object(r.details())).collect();
    Ok(Reply::ok().with_value(key, serde_json::Value::Array(records)))
}

/// The webhook of a party list read (searchParty, searchEntity, getAllParties): the IDs
/// answered, comma separated, as searchAccount's `accountIds`.
pub async fn fire_party_ids<'a>(ctx: &Ctx, ids: impl Iterator<Item = &'a str>) -> Result<(), ApiError> {
    let event = ids_event(&ctx.operation, None, "partyIds", ids);
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await
}

/// getParty and getEntity: the caller's live record (`198` otherwise), an array of one
/// under `key`; the `method` webhook carries that record.
pub async fn get<R: Searchable>(ctx: &Ctx, p: &Params, method: &str, key: &str) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let record = records::live::<R>(ctx, &id, no_party).await?.rec.details();
    let event = record_event(method, &record);
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    Ok(Reply::ok().with_value(key, serde_json::Value::Array(vec![serde_json::Value::Object(record)])))
}

/// updateParty and updateEntity, once the request is checked: `apply` sets the fields sent
/// on the caller's live record (`198` otherwise) and the whole row is written back with the
/// flag `checks`; a concurrent change makes the write fail its version check, and the request
/// is applied to the fresh copy. The answer (an array of one under `key`) and the `method`
/// webhook carry the status record.
pub async fn update<R: PartyRecord>(
    ctx: &Ctx,
    p: Params,
    id: String,
    apply: fn(&Params, &mut R) -> Result<(), ApiError>,
    checks: Checks,
    method: &str,
    key: &str,
) -> Result<Reply, ApiError> {
    // Owned: a borrowed string captured by the attempt keeps its future from being `Send`.
    let (method, key) = (method.to_owned(), key.to_owned());
    ctx.transact(async move |ctx, _| {
        let stored = records::live::<R>(&ctx, &id, no_party).await?;
        let mut r = stored.rec.clone();
        apply(&p, &mut r)?;
        *r.updated_mut() = ctx.now();
        let view = r.status_view();
        let event = view_event(&method, &view);
        let reply = Reply::ok().with(&key, shared::insert_array(view));
        Ok(checks.onto(Plan::new(records::replace(ctx.client_id(), &stored, &r)?, reply).event(event)))
    })
    .await
}

/// deleteParty and deleteEntity: a virtual delete of the caller's live record (`198`
/// otherwise); the `method` webhook carries `partyId`.
pub async fn delete_virtually<R: PartyRecord>(ctx: &Ctx, id: String, method: &str) -> Result<Reply, ApiError> {
    let method = method.to_owned();
    ctx.transact(async move |ctx, _| {
        let stored = records::live::<R>(&ctx, &id, no_party).await?;
        let mut r = stored.rec.clone();
        // Deleted records list as `Archived`, as deleted accounts do (OBSERVED-MORE).
        *r.deleted_mut() = true;
        *r.archived_mut() = true;
        *r.updated_mut() = ctx.now();
        let event = view_event(&method, &PartyRef { id: &id });
        Ok(Plan::new(records::replace(ctx.client_id(), &stored, &r)?, ()).event(event))
    })
    .await?;
    Ok(Reply::ok().desc("Party deleted successfully!"))
}

/// The `searchKeyword` of a search, trimmed and lower-cased (`106` when blank).
pub fn keyword(p: &Params) -> Result<String, ApiError> {
    Ok(p.req(&["searchKeyword"])?.trim().to_lowercase())
}

/// A boolean parameter of a method-style read: `true`/`1` or `false`/`0` (blank: false).
pub fn flag_param(p: &Params, name: &str) -> Result<bool, ApiError> {
    match p.text(&[name])?.trim().to_ascii_lowercase().as_str() {
        "" | "false" | "0" => Ok(false),
        "true" | "1" => Ok(true),
        _ => Err(ApiError::invalid(name, "must be true or false")),
    }
}

/// An optional integer parameter at least `min`.
pub fn int_at_least(p: &Params, name: &str, min: i64) -> Result<Option<usize>, ApiError> {
    match p.int(name)? {
        None => Ok(None),
        Some(n) if n >= min => Ok(usize::try_from(n).ok()),
        Some(_) => Err(ApiError::invalid(name, format!("must be at least {min}"))),
    }
}
