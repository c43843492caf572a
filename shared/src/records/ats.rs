//! Where the ATS keeps its records (CONTRACT, "ATS"; `docs/ats.md`):
//!
//! - an order: `{client}#ORDER` / orderId, a versioned record listed by `executionTime`;
//! - a matched trade: `{client}#MATCH` / matchId, the same way;
//! - the book: one entry per order resting on it, `{client}#BOOK#{securityId}` /
//!   `B#{inverted price}#{seq}` for bids, `S#{price}#{seq}` for offers, `R{B|S}#{seq}` for
//!   quote requests, so that one query in sort-key order reads a side best price first and
//!   oldest first; an entry with an expiry is on `gsi1` under `ATSEXP` by that instant;
//! - a security's time-priority counter: `{client}#BOOKSEQ` / securityId;
//! - `ATSWAIT` / `{client}#{securityId}`: orders rested on the book while the market was
//!   closed and may cross; the open uncrosses them;
//! - `ATSNEW` / `{client}#{securityId}#{orderId}`: an open order its book has not placed yet;
//! - the operator's order approval per issuer, and the global and per-security hours.

use rust_decimal::Decimal;

use crate::error::ApiError;
use crate::model::ats::{AtsOrder, MatchedTrade};
use crate::model::market_hours::{SecurityHours, Week};
use crate::records::{get_json, json_item, put_json, record, replace, Stored};
use crate::store::{CmpOp, Cond, Index, Key, Query, SkRange, Store, Update, Val, Write};

record!(AtsOrder, "ORDER", order_id; execution_time);
record!(MatchedTrade, "MATCH", match_id; execution_time);

pub async fn order(store: &dyn Store, client: &str, id: &str) -> Result<Option<Stored<AtsOrder>>, ApiError> {
    super::load::<AtsOrder>(store, client, id).await
}

pub async fn matched(store: &dyn Store, client: &str, id: &str) -> Result<Option<Stored<MatchedTrade>>, ApiError> {
    super::load::<MatchedTrade>(store, client, id).await
}

// ---------------------------------------------------------------- the book

fn book_pk(client: &str, security: &str) -> String {
    format!("{client}#BOOK#{security}")
}

/// A price as 20 sortable digits of millionths (prices carry at most six places).
fn price_key(price: Decimal) -> u128 {
    let micros = (price * Decimal::from(1_000_000)).trunc();
    u128::try_from(micros.mantissa()).unwrap_or(0)
}

const PRICE_SPAN: u128 = 100_000_000_000_000_000_000;

/// The sort key of a resting order's book entry.
fn book_sk(o: &AtsOrder) -> String {
    let side = if o.is_buy() { "B" } else { "S" };
    if o.is_rfq() {
        return format!("R{side}#{:020}", o.seq);
    }
    let p = price_key(o.price);
    let p = if o.is_buy() { PRICE_SPAN - 1 - p } else { p };
    format!("{side}#{p:020}#{:020}", o.seq)
}

/// Whether an order has an entry on its security's book.
fn on_book(o: &AtsOrder) -> bool {
    o.seq > 0 && o.order_status.is_open()
}

fn book_entry(client: &str, o: &AtsOrder) -> Write {
    let mut item = Key::new(book_pk(client, &o.security_id), book_sk(o)).item();
    item.insert("o".into(), Val::S(o.order_id.clone()));
    if let Some(at) = o.expires_at {
        item.insert("gsi1pk".into(), Val::S(EXPIRY.into()));
        item.insert("gsi1sk".into(), Val::S(format!("{at:012}#{client}#{}", o.order_id)));
    }
    Write::Put { item, cond: None }
}

const EXPIRY: &str = "ATSEXP";

/// The writes of a new order: the record, and its book entry when it already rests (or its
/// arrival mark when its book has yet to place it).
pub fn insert_order(client: &str, o: &AtsOrder) -> Result<Vec<Write>, ApiError> {
    let mut writes = super::insert(client, o)?;
    if on_book(o) {
        writes.push(book_entry(client, o));
    }
    if arriving(o) {
        writes.push(arrival(client, o));
    }
    Ok(writes)
}

/// The writes of an order's change: the record over the version read, and its book entry
/// moved with it (taken off, put on, or re-keyed by a new price or place).
pub fn change_order(client: &str, before: &Stored<AtsOrder>, after: &AtsOrder) -> Result<Vec<Write>, ApiError> {
    let mut writes = replace(client, before, after)?;
    let (was, is) = (on_book(&before.rec), on_book(after));
    let moved = was && is && (book_sk(&before.rec) != book_sk(after) || before.rec.expires_at != after.expires_at);
    if was && (!is || moved) {
        writes.push(Write::Delete {
            key: Key::new(book_pk(client, &before.rec.security_id), book_sk(&before.rec)),
            cond: None,
        });
    }
    if is && (!was || moved) {
        writes.push(book_entry(client, after));
    }
    match (arriving(&before.rec), arriving(after)) {
        (false, true) => writes.push(arrival(client, after)),
        (true, false) => writes.push(Write::Delete {
            key: arrival_key(client, after),
            cond: None,
        }),
        _ => {}
    }
    Ok(writes)
}

// ---------------------------------------------------------------- orders not yet on their book

/// An open order its book has not placed yet (`seq` 0) stands under `ATSNEW` from the write
/// that makes it so until the write that places, fills or ends it. A mark that outlives a
/// moment means the book never got the order's message (the process stopped between the
/// commit and the hand-over, or with the message in the local API's lane): [`stranded`]
/// finds it, and the book's sweep sends the message again (a repeat changes nothing).
const ARRIVING: &str = "ATSNEW";

fn arriving(o: &AtsOrder) -> bool {
    o.seq == 0 && o.order_status.is_open()
}

fn arrival_key(client: &str, o: &AtsOrder) -> Key {
    Key::new(ARRIVING, format!("{client}#{}#{}", o.security_id, o.order_id))
}

/// The mark, with the time of the order's change (`at`, part 1's timestamp: it sorts).
fn arrival(client: &str, o: &AtsOrder) -> Write {
    let mut item = arrival_key(client, o).item();
    item.insert("at".into(), Val::S(o.updated_date.clone()));
    Write::Put { item, cond: None }
}

/// Moves an order's arrival mark to `at`, if it still stands: its message just went again, and
/// the next may wait its own moment (on a slow store the first may still be on its way).
pub fn sent_again(client: &str, security: &str, order: &str, at: &str) -> Write {
    Write::Update {
        key: Key::new(ARRIVING, format!("{client}#{security}#{order}")),
        ops: vec![Update::Set("at".into(), Val::S(at.to_owned()))],
        cond: Some(Cond::Exists),
    }
}

/// Orders marked arriving at `cutoff` or before: `(client, securityId, orderId)`.
pub async fn stranded(store: &dyn Store, cutoff: &str) -> Result<Vec<(String, String, String)>, ApiError> {
    let items = super::query_all(store, Query::new(Index::Table, ARRIVING)).await?;
    Ok(items
        .iter()
        .filter(|i| i.get("at").and_then(Val::as_str).is_some_and(|at| at <= cutoff))
        .filter_map(|i| {
            let mut parts = i.get("sk").and_then(Val::as_str)?.rsplitn(3, '#');
            let (order, security, client) = (parts.next()?, parts.next()?, parts.next()?);
            Some((client.to_owned(), security.to_owned(), order.to_owned()))
        })
        .collect())
}

pub fn insert_match(client: &str, m: &MatchedTrade) -> Result<Vec<Write>, ApiError> {
    super::insert(client, m)
}

/// The IDs of the book's entries in `range`, in priority order (all, or the first `limit`).
async fn entries(
    store: &dyn Store,
    client: &str,
    security: &str,
    range: SkRange,
    limit: Option<u32>,
) -> Result<Vec<String>, ApiError> {
    let mut q = Query::new(Index::Table, book_pk(client, security));
    q.sk = range;
    let items = match limit {
        Some(limit) => {
            q.limit = limit;
            store.query(&q).await?.items
        }
        None => super::query_all(store, q).await?,
    };
    Ok(items
        .iter()
        .filter_map(|i| i.get("o").and_then(Val::as_str).map(str::to_owned))
        .collect())
}

/// The resting orders `incoming` could trade with: the other side's limit orders at its
/// price or better, best first.
pub async fn crossing(store: &dyn Store, client: &str, incoming: &AtsOrder) -> Result<Vec<String>, ApiError> {
    let p = price_key(incoming.price);
    let range = if incoming.is_buy() {
        SkRange::Between("S#".into(), format!("S#{p:020}#~"))
    } else {
        SkRange::Between("B#".into(), format!("B#{:020}#~", PRICE_SPAN - 1 - p))
    };
    entries(store, client, &incoming.security_id, range, None).await
}

/// Every order resting on a security's book (bids, then quote requests, then offers).
pub async fn whole_book(store: &dyn Store, client: &str, security: &str) -> Result<Vec<String>, ApiError> {
    entries(store, client, security, SkRange::All, None).await
}

/// A page of one side's limit orders, best first: at most `limit` from `start` (a previous
/// page's cursor), and the cursor of the next page.
pub async fn top(
    store: &dyn Store,
    client: &str,
    security: &str,
    buy: bool,
    limit: u32,
    start: Option<crate::store::Item>,
) -> Result<(Vec<String>, Option<crate::store::Item>), ApiError> {
    let side = if buy { "B" } else { "S" };
    let mut q = Query::new(Index::Table, book_pk(client, security));
    q.sk = SkRange::BeginsWith(format!("{side}#"));
    q.limit = limit;
    q.start = start;
    let page = store.query(&q).await?;
    let ids = page
        .items
        .iter()
        .filter_map(|i| i.get("o").and_then(Val::as_str).map(str::to_owned))
        .collect();
    Ok((ids, page.next))
}

/// Whether a quote request rests on one side (`buy`) of a security's book: one entry read.
pub async fn has_rfq(store: &dyn Store, client: &str, security: &str, buy: bool) -> Result<bool, ApiError> {
    let side = if buy { "B" } else { "S" };
    let rfq = entries(
        store,
        client,
        security,
        SkRange::BeginsWith(format!("R{side}#")),
        Some(1),
    )
    .await?;
    Ok(!rfq.is_empty())
}

/// The orders whose expiry is at or before `now` (epoch seconds): `(client, orderId)`.
pub async fn expired(store: &dyn Store, now: i64) -> Result<Vec<(String, String)>, ApiError> {
    let mut q = Query::new(Index::Gsi1, EXPIRY);
    q.sk = SkRange::Between(String::new(), format!("{now:012}#~"));
    let items = super::query_all(store, q).await?;
    Ok(items
        .iter()
        .filter_map(|i| {
            let (_, rest) = i.get("gsi1sk").and_then(Val::as_str)?.split_once('#')?;
            let (client, order) = rest.split_once('#')?;
            Some((client.to_owned(), order.to_owned()))
        })
        .collect())
}

// ---------------------------------------------------------------- time priority

fn seq_key(client: &str, security: &str) -> Key {
    Key::new(format!("{client}#BOOKSEQ"), security)
}

/// A security's last place in time priority.
pub async fn last_seq(store: &dyn Store, client: &str, security: &str) -> Result<u64, ApiError> {
    let n = store
        .get(&seq_key(client, security))
        .await?
        .and_then(|i| i.get("n").and_then(Val::as_num));
    Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
}

/// Moves a security's counter from `last` (as read) to `next`: two writers of one book
/// cannot take the same place.
pub fn take_seq(client: &str, security: &str, last: u64, next: u64) -> Write {
    let mut item = seq_key(client, security).item();
    item.insert("n".into(), Val::from(next as i64));
    let cond = if last == 0 {
        Cond::NotExists
    } else {
        Cond::Cmp("n".into(), CmpOp::Eq, Val::from(last as i64))
    };
    Write::Put { item, cond: Some(cond) }
}

// ---------------------------------------------------------------- books waiting for the open

const WAITING: &str = "ATSWAIT";

fn waiting_key(client: &str, security: &str) -> Key {
    Key::new(WAITING, format!("{client}#{security}"))
}

/// Marks a security's book as holding orders rested while closed.
pub fn wait_for_open(client: &str, security: &str) -> Write {
    Write::Put {
        item: waiting_key(client, security).item(),
        cond: None,
    }
}

pub fn opened(client: &str, security: &str) -> Write {
    Write::Delete {
        key: waiting_key(client, security),
        cond: None,
    }
}

pub async fn is_waiting(store: &dyn Store, client: &str, security: &str) -> Result<bool, ApiError> {
    Ok(store.get(&waiting_key(client, security)).await?.is_some())
}

/// Every book waiting for its market's open: `(client, securityId)`.
pub async fn waiting(store: &dyn Store) -> Result<Vec<(String, String)>, ApiError> {
    let items = super::query_all(store, Query::new(Index::Table, WAITING)).await?;
    Ok(items
        .iter()
        .filter_map(|i| {
            let (client, security) = i.get("sk").and_then(Val::as_str)?.split_once('#')?;
            Some((client.to_owned(), security.to_owned()))
        })
        .collect())
}

// ---------------------------------------------------------------- settings

fn approval_key(client: &str, issuer: &str) -> Key {
    Key::new(format!("{client}#ATSAPPROVAL"), issuer)
}

/// Whether the operator requires approval of new orders for `issuer`.
pub async fn approval_required(store: &dyn Store, client: &str, issuer: &str) -> Result<bool, ApiError> {
    Ok(store.get(&approval_key(client, issuer)).await?.is_some())
}

pub fn set_approval(client: &str, issuer: &str, required: bool) -> Write {
    if required {
        Write::Put {
            item: approval_key(client, issuer).item(),
            cond: None,
        }
    } else {
        Write::Delete {
            key: approval_key(client, issuer),
            cond: None,
        }
    }
}

fn hours_key(client: &str, of: &str) -> Key {
    Key::new(format!("{client}#ATSHOURS"), of)
}

/// The client's global week (the default until the operator sets it).
pub async fn week(store: &dyn Store, client: &str) -> Result<Week, ApiError> {
    Ok(stored_week(store, client).await?.0)
}

/// The client's global week with the version its next write is conditioned on (`None`
/// while it is the default).
pub async fn stored_week(store: &dyn Store, client: &str) -> Result<(Week, Option<i64>), ApiError> {
    let stored: Option<Stored<Week>> = get_json(store, &hours_key(client, "global")).await?;
    Ok(stored.map_or((Week::default(), None), |s| (s.rec, Some(s.version))))
}

/// Writes the client's week over the version read, so that two concurrent changes of
/// different days both count.
pub fn set_week(client: &str, week: &Week, before: Option<i64>) -> Result<Write, ApiError> {
    put_json(hours_key(client, "global"), week, before)
}

fn security_hours_key(client: &str, security: &str) -> Key {
    hours_key(client, &format!("SEC#{security}"))
}

/// A security's own hours; `None` when it follows the global week.
pub async fn security_hours(
    store: &dyn Store,
    client: &str,
    security: &str,
) -> Result<Option<SecurityHours>, ApiError> {
    let stored: Option<Stored<SecurityHours>> = get_json(store, &security_hours_key(client, security)).await?;
    Ok(stored.map(|s| s.rec))
}

pub fn set_security_hours(client: &str, security: &str, hours: Option<&SecurityHours>) -> Result<Write, ApiError> {
    Ok(match hours {
        Some(h) => Write::Put {
            item: json_item(security_hours_key(client, security), h, 1)?,
            cond: None,
        },
        None => Write::Delete {
            key: security_hours_key(client, security),
            cond: None,
        },
    })
}

/// The week a security trades in: the global week with its own days.
pub async fn trading_week(store: &dyn Store, client: &str, security: &str) -> Result<Week, ApiError> {
    let week = week(store, client).await?;
    Ok(match security_hours(store, client, security).await? {
        Some(own) => week.with_security(&own),
        None => week,
    })
}
