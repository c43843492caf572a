//! Idempotency keys (beyond the spec, opt-in): a write request that carries an
//! `Idempotency-Key` header is answered once. The first request with a key claims it and
//! runs; its answer is stored for 24 hours (a DynamoDB TTL attribute) and replayed to every
//! later request with the same key and the same request, without running the operation
//! again: no write, no webhook, no billing. The same key with a different request is HTTP
//! 422 `1422`; a request whose twin is still running is HTTP 409 `1409`.
//!
//! Keys are per client: `{client}#IDEM` / key. A claim is a conditional put (free, or
//! expired); the answer replaces it once rendered. An internal failure (5xx) releases the
//! claim so the request may be retried; a process that dies while running leaves the claim
//! in place, so the key answers 409 until it expires (saying, after 90 seconds, that the
//! first run never finished and may or may not have applied): the operation never runs twice.

use bytes::Bytes;

use crate::error::ApiError;
use crate::store::{CmpOp, Cond, Key, Store, StoreError, Val, Write};

/// The header (case-insensitive, as HTTP headers are).
pub const HEADER: &str = "idempotency-key";
/// How long an answer is kept.
pub const TTL_SECONDS: i64 = 24 * 60 * 60;
/// The longest key.
const MAX_KEY: usize = 255;

/// A key claimed by this request: record its answer (or release it) when done.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    key: Key,
    fingerprint: String,
    expires: i64,
}

/// What a claim found.
#[derive(Debug, PartialEq)]
pub enum Claim {
    /// The key is this request's: run it.
    Fresh(Held),
    /// The request ran before: its answer.
    Replay { status: u16, body: Bytes },
}

fn key(client: &str, idem: &str) -> Key {
    Key::new(format!("{client}#IDEM"), idem)
}

/// The request as compared between uses of a key: method, path, query and body.
pub fn fingerprint(method: &http::Method, path: &str, query: Option<&str>, body: &[u8]) -> String {
    let mut h = blake3::Hasher::new();
    for part in [
        method.as_str().as_bytes(),
        path.as_bytes(),
        query.unwrap_or("").as_bytes(),
        body,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().to_hex().to_string()
}

/// A key as sent: 1 to 255 visible ASCII characters (`106`, resource-style `1400`, otherwise).
pub fn parse(raw: &http::HeaderValue) -> Result<String, ApiError> {
    match raw.to_str() {
        Ok(k) if !k.is_empty() && k.len() <= MAX_KEY && k.bytes().all(|b| b.is_ascii_graphic()) => Ok(k.to_owned()),
        _ => Err(ApiError::invalid(
            "Idempotency-Key",
            "1 to 255 visible ASCII characters",
        )),
    }
}

fn mismatch() -> ApiError {
    ApiError::Resource {
        http: 422,
        code: "1422",
        desc: "Idempotency-Key was used with a different request".into(),
    }
}

fn in_flight() -> ApiError {
    ApiError::Resource {
        http: 409,
        code: "1409",
        desc: "A request with this Idempotency-Key is still being processed".into(),
    }
}

/// A claim older than any request runs (part 1: a terminal state within 90 seconds) was left
/// by a process that stopped while running it: still 409, since it may have been applied.
const ABANDONED_AFTER: i64 = 90;

fn abandoned() -> ApiError {
    ApiError::Resource {
        http: 409,
        code: "1409",
        desc: "The first request with this Idempotency-Key never finished (the service stopped \
               while running it): it may or may not have been applied; read the record to know"
            .into(),
    }
}

/// Claims `idem` for the request `fingerprint` of `client` at `now` (Unix seconds), or finds
/// what an earlier use left: its answer to replay, or an error (422 another request, 409 one
/// still running).
pub async fn claim(
    store: &dyn Store,
    client: &str,
    idem: &str,
    fingerprint: &str,
    now: i64,
) -> Result<Claim, ApiError> {
    let k = key(client, idem);
    let held = Held {
        key: k.clone(),
        fingerprint: fingerprint.to_owned(),
        expires: now + TTL_SECONDS,
    };
    let mut item = k.item();
    item.insert("fp".into(), Val::S(fingerprint.to_owned()));
    item.insert("ttl".into(), Val::from(held.expires));
    let put = |cond| Write::Put {
        item: item.clone(),
        cond: Some(cond),
    };
    // A fresh key, the usual case, costs one conditional write.
    match store.write(vec![put(Cond::NotExists)]).await {
        Ok(()) => return Ok(Claim::Fresh(held)),
        Err(StoreError::ConditionFailed { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let found = store.get(&k).await?.ok_or_else(in_flight)?;
    if found.get("ttl").and_then(Val::as_num).is_some_and(|t| t >= now.into()) {
        return earlier(&found, fingerprint, now);
    }
    // Held by an expired answer (DynamoDB removes those within days, not at once).
    match store
        .write(vec![put(Cond::Cmp("ttl".into(), CmpOp::Lt, Val::from(now)))])
        .await
    {
        Ok(()) => Ok(Claim::Fresh(held)),
        // A twin claimed it first.
        Err(StoreError::ConditionFailed { .. }) => match store.get(&k).await? {
            Some(found) => earlier(&found, fingerprint, now),
            None => Err(in_flight()),
        },
        Err(e) => Err(e.into()),
    }
}

/// What an earlier use of the key left: another request's key (422), its answer, or its
/// claim while it runs, or abandoned by a stopped process (409).
fn earlier(found: &crate::store::Item, fingerprint: &str, now: i64) -> Result<Claim, ApiError> {
    if found.get("fp").and_then(Val::as_str) != Some(fingerprint) {
        return Err(mismatch());
    }
    match (
        found.get("status").and_then(Val::as_num),
        found.get("body").and_then(Val::as_str),
    ) {
        (Some(status), Some(body)) => Ok(Claim::Replay {
            status: u16::try_from(status).unwrap_or(200),
            body: Bytes::from(body.to_owned()),
        }),
        // A claim's `ttl` is its time plus `TTL_SECONDS`.
        _ if found
            .get("ttl")
            .and_then(Val::as_num)
            .is_some_and(|ttl| ttl < (now + TTL_SECONDS - ABANDONED_AFTER).into()) =>
        {
            Err(abandoned())
        }
        _ => Err(in_flight()),
    }
}

/// A multipart request's parts as compared between uses of a key (a digest of its fields and
/// of each file's field, name, type and bytes), whatever boundary separated them.
pub fn parts(params: &crate::http::params::Params) -> Vec<u8> {
    let mut h = blake3::Hasher::new();
    h.update(&serde_json::to_vec(params.map()).unwrap_or_default());
    for u in params.uploads() {
        for part in [
            u.field.as_bytes(),
            u.file_name.as_bytes(),
            u.content_type.as_bytes(),
            &u.bytes,
        ] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
    }
    h.finalize().as_bytes().to_vec()
}

/// Frees a claimed key, so the request may be sent again: after an internal failure, or an
/// answer too large to keep.
pub fn release(held: &Held) -> Write {
    Write::Delete {
        key: held.key.clone(),
        cond: None,
    }
}

/// Records the answer of a claimed request (or, after an internal failure, releases the
/// key so the request may be sent again).
pub fn settle(held: &Held, status: u16, body: &[u8]) -> Write {
    if status >= 500 {
        return release(held);
    }
    let mut item = held.key.item();
    item.insert("fp".into(), Val::S(held.fingerprint.clone()));
    item.insert("ttl".into(), Val::from(held.expires));
    item.insert("status".into(), Val::from(i64::from(status)));
    item.insert("body".into(), Val::S(String::from_utf8_lossy(body).into_owned()));
    Write::Put { item, cond: None }
}
