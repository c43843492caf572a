//! The book worker: one message at a time per security (the sequencer's guarantee), it
//! takes an order onto its security's book, matching it with the pure core while the
//! market is open, and uncrosses a book at the open. Each fill commits as one transaction
//! over both orders and the matched trade, conditioned on the versions read, so a
//! redelivered message finds the versions moved on and changes nothing; a concurrent
//! cancel makes the worker read the book again. Also the expiry of `Day` and `Other`
//! orders: by the `ats-expiry` batch, and by the worker, which never matches an expired
//! order.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use http::Method;
use matching::{Book, Contingency, Fill, Kind, Order, Side};
use rust_decimal::Decimal;
use shared::batches::{Batch, Due};
use shared::calendar::EASTERN;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::ats::{execution_time, AtsOrder, MatchedTrade, MATCH};
use shared::queue::sequencer::{BookFuture, BookMessage};
use shared::records::ats as book;
use shared::records::Stored;
use shared::webhooks::{view_event, Event};
use shared::{batch_due, batch_process, operator_op, ApiError, Ctx, Plan, Ports, Routes};

/// How often the worker reads a book again after a concurrent change before it gives the
/// message back (SQS then redelivers it).
const ROUNDS: usize = 16;

/// The `updateOrder` webhook the ATS sends on every change of an order's status or
/// remaining shares: the order's record, without identification headers.
pub fn order_event(o: &AtsOrder) -> Event {
    view_event("updateOrder", &o.view()).without_token()
}

/// Applies one message to its book (the sequencer's work).
pub fn apply(ports: Arc<Ports>, msg: BookMessage) -> BookFuture {
    Box::pin(apply_message(ports, msg))
}

async fn apply_message(ports: Arc<Ports>, msg: BookMessage) -> Result<(), ApiError> {
    let Some(ctx) = Ctx::background(&ports, &msg.client_id, "updateOrder", "book").await? else {
        return Ok(());
    };
    let result = run(&ctx, &msg).await;
    ports.dispatch(ctx.take_committed()).await;
    result
}

/// What one round ended with: done, or a concurrent change to read the book again after.
enum Round {
    Done,
    Stale,
}

async fn run(ctx: &Ctx, msg: &BookMessage) -> Result<(), ApiError> {
    for _ in 0..ROUNDS {
        if let Round::Done = round(ctx, msg).await? {
            return Ok(());
        }
    }
    Err(ApiError::internal("the book changed concurrently in every round"))
}

async fn round(ctx: &Ctx, msg: &BookMessage) -> Result<Round, ApiError> {
    let (store, client) = (ctx.store(), ctx.client_id());
    let now = ctx.app.clock.now();
    // A halted book (its offering no longer a security) trades as a closed market: orders
    // rest, marked for the open, and nothing matches.
    let open = crate::support::listed(ctx, &msg.security_id).await?.is_some()
        && book::trading_week(store, client, &msg.security_id).await?.is_open(now);
    if open && book::is_waiting(store, client, &msg.security_id).await? {
        if let Round::Stale = uncross(ctx, &msg.security_id, now).await? {
            return Ok(Round::Stale);
        }
    }
    let Some(id) = &msg.order_id else {
        return Ok(Round::Done);
    };
    let Some(taker) = book::order(store, client, id).await? else {
        return Ok(Round::Done);
    };
    if !taker.rec.order_status.is_open() || taker.rec.seq > 0 || taker.rec.security_id != msg.security_id {
        return Ok(Round::Done);
    }
    if expired(&taker.rec, now) {
        return commit(ctx, vec![ended(ctx, &taker, now)?]).await;
    }
    if taker.rec.is_rfq() || !open {
        return rest(ctx, taker, !open).await;
    }
    // The book's place counter is read before the book itself: an order another worker rests
    // after this read (one the read below may miss) moves the counter, so this order's own
    // resting fails its condition and the round reads the book again, instead of both resting
    // crossed (SQS FIFO serializes a book in AWS; local processes sharing a table do not).
    let last = book::last_seq(store, client, &msg.security_id).await?;
    let mut known = HashMap::new();
    let mut core = Book::new();
    for id in book::crossing(store, client, &taker.rec).await? {
        if let Some(maker) = book::order(store, client, &id).await? {
            if maker.rec.order_status.is_open() && maker.rec.seq > 0 {
                core.rest(core_order(&maker.rec));
                known.insert(maker.rec.order_id.clone(), maker);
            }
        }
    }
    if let Round::Stale = expire_in(ctx, &mut core, &known, now).await? {
        return Ok(Round::Stale);
    }
    let fills = core.submit(core_order(&taker.rec));
    known.insert(taker.rec.order_id.clone(), taker);
    if let Round::Stale = commit_fills(ctx, &fills, &mut known, now).await? {
        return Ok(Round::Stale);
    }
    match known.remove(id) {
        Some(taker) if taker.rec.remaining_shares > 0 => rest_after(ctx, taker, false, last).await,
        _ => Ok(Round::Done),
    }
}

/// Matches what crossed while the market was closed, in time order, then clears the mark.
async fn uncross(ctx: &Ctx, security: &str, now: DateTime<Utc>) -> Result<Round, ApiError> {
    let (store, client) = (ctx.store(), ctx.client_id());
    let mut resting = Vec::new();
    for id in book::whole_book(store, client, security).await? {
        if let Some(o) = book::order(store, client, &id).await? {
            if o.rec.order_status.is_open() && o.rec.seq > 0 {
                resting.push(o);
            }
        }
    }
    resting.sort_by_key(|o| o.rec.seq);
    let mut core = Book::new();
    for o in &resting {
        core.rest(core_order(&o.rec));
    }
    let mut known: HashMap<String, Stored<AtsOrder>> =
        resting.into_iter().map(|o| (o.rec.order_id.clone(), o)).collect();
    if let Round::Stale = expire_in(ctx, &mut core, &known, now).await? {
        return Ok(Round::Stale);
    }
    let fills = core.uncross();
    if let Round::Stale = commit_fills(ctx, &fills, &mut known, now).await? {
        return Ok(Round::Stale);
    }
    commit(ctx, vec![(vec![book::opened(client, security)], Vec::new())]).await
}

/// Takes expired orders off the core and commits their expiry.
async fn expire_in(
    ctx: &Ctx,
    core: &mut Book<Decimal>,
    known: &HashMap<String, Stored<AtsOrder>>,
    now: DateTime<Utc>,
) -> Result<Round, ApiError> {
    let mut changes = Vec::new();
    for o in core.expire(now.timestamp().max(0) as u64) {
        if let Some(stored) = known.get(&o.id.to_string()) {
            changes.push(ended(ctx, stored, now)?);
        }
    }
    if changes.is_empty() {
        return Ok(Round::Done);
    }
    commit(ctx, changes).await
}

fn expired(o: &AtsOrder, now: DateTime<Utc>) -> bool {
    o.expires_at.is_some_and(|at| at <= now.timestamp())
}

type Change = (Vec<shared::store::Write>, Vec<Event>);

/// An order's expiry: off the book, `Cancelled`, or `Partially Executed & Cancelled` after
/// fills.
fn ended(ctx: &Ctx, stored: &Stored<AtsOrder>, now: DateTime<Utc>) -> Result<Change, ApiError> {
    let mut after = stored.rec.clone();
    after.order_status = after.ended(true);
    after.updated_date = shared::clock::timestamp(now);
    after.cancel_date = after.updated_date.clone();
    let writes = book::change_order(ctx.client_id(), stored, &after)?;
    Ok((writes, vec![order_event(&after)]))
}

/// Commits each change in its own transaction, as planned: a failed condition means the
/// book changed under the worker (`Stale`), never a retry of a plan made on old reads.
async fn commit(ctx: &Ctx, changes: Vec<Change>) -> Result<Round, ApiError> {
    for (writes, events) in changes {
        let committed = ctx
            .transact(async move |_, attempt| {
                if attempt > 0 {
                    return Ok(Plan::answer(false));
                }
                Ok(Plan::new(writes.clone(), true).events(events.clone()))
            })
            .await?;
        if !committed {
            return Ok(Round::Stale);
        }
    }
    Ok(Round::Done)
}

/// Rests an order on its book at the security's next place in time priority (marking the
/// book for the open when the market is closed).
async fn rest(ctx: &Ctx, stored: Stored<AtsOrder>, closed: bool) -> Result<Round, ApiError> {
    let last = book::last_seq(ctx.store(), ctx.client_id(), &stored.rec.security_id).await?;
    rest_after(ctx, stored, closed, last).await
}

/// Rests an order after the place `last`, the counter as read before the book was: `Stale`
/// when another order took a place since.
async fn rest_after(ctx: &Ctx, stored: Stored<AtsOrder>, closed: bool, last: u64) -> Result<Round, ApiError> {
    let client = ctx.client_id();
    let security = stored.rec.security_id.clone();
    let mut after = stored.rec.clone();
    after.seq = last + 1;
    let mut writes = book::change_order(client, &stored, &after)?;
    writes.push(book::take_seq(client, &security, last, after.seq));
    if closed && !after.is_rfq() {
        writes.push(book::wait_for_open(client, &security));
    }
    commit(ctx, vec![(writes, Vec::new())]).await
}

/// Commits fills one by one: both orders (remaining shares, status, the match) and the
/// matched trade, with `updateOrder` for each order and `matchedTradenotify` once.
async fn commit_fills(
    ctx: &Ctx,
    fills: &[Fill<Decimal>],
    known: &mut HashMap<String, Stored<AtsOrder>>,
    now: DateTime<Utc>,
) -> Result<Round, ApiError> {
    let client = ctx.client_id();
    for (i, f) in (0i64..).zip(fills) {
        let (Some(bid), Some(ask)) = (known.get(&f.bid.to_string()), known.get(&f.ask.to_string())) else {
            return Err(ApiError::internal("a fill of an order the worker did not read"));
        };
        // One microsecond apart: part 1's keyset page takes the last `executionTime` as an
        // exclusive bound, so the fills of one sweep must not share it.
        let at = execution_time(now + chrono::Duration::microseconds(i));
        let stamp = shared::clock::timestamp(now);
        let trade = MatchedTrade {
            match_id: ctx.next_id(MATCH).await?,
            security_id: bid.rec.security_id.clone(),
            security_name: bid.rec.security_name.clone(),
            issuer_id: bid.rec.issuer_id.clone(),
            ask_order_id: ask.rec.order_id.clone(),
            bid_order_id: bid.rec.order_id.clone(),
            buyer_member_id: bid.rec.member_id.clone(),
            seller_member_id: ask.rec.member_id.clone(),
            number_of_shares: f.quantity,
            price: f.price,
            execution_time: at,
            created_date: stamp.clone(),
            deleted: false,
        };
        let filled = |o: &AtsOrder, remaining: u64| {
            let mut after = o.clone();
            after.remaining_shares = remaining;
            after.order_status = AtsOrder::after_fill(remaining);
            after.matches.push(trade.match_id.clone());
            after.updated_date = stamp.clone();
            after
        };
        let (bid_after, ask_after) = (filled(&bid.rec, f.bid_remaining), filled(&ask.rec, f.ask_remaining));
        let mut writes = book::change_order(client, bid, &bid_after)?;
        writes.extend(book::change_order(client, ask, &ask_after)?);
        writes.extend(book::insert_match(client, &trade)?);
        let events = vec![
            order_event(&bid_after),
            order_event(&ask_after),
            view_event("matchedTradenotify", &trade.view()).without_token(),
        ];
        if let Round::Stale = commit(ctx, vec![(writes, events)]).await? {
            return Ok(Round::Stale);
        }
        for after in [bid_after, ask_after] {
            if let Some(s) = known.get_mut(&after.order_id) {
                s.version += 1;
                s.rec = after;
            }
        }
    }
    Ok(Round::Done)
}

/// The core's view of a stored order.
pub fn core_order(o: &AtsOrder) -> Order<Decimal> {
    Order {
        id: o.order_id.parse().unwrap_or(0),
        member: o.member_id.trim_start_matches('A').parse().unwrap_or(u64::MAX),
        side: if o.is_buy() { Side::Buy } else { Side::Sell },
        kind: if o.is_rfq() { Kind::Rfq } else { Kind::Limit },
        price: o.price,
        quantity: o.shares,
        remaining: o.remaining_shares,
        contingency: match o.contingencies.as_str() {
            "All or None" => Contingency::AllOrNone,
            "Minimum Quantity" => Contingency::MinimumQuantity(o.minimum_threshold),
            _ => Contingency::None,
        },
        disclosed: o.disclose_price,
        expires: o.expires_at.map(|at| at.max(0) as u64),
    }
}

/// How long an order may wait for its book before its message counts as lost (the book
/// places one in milliseconds; SQS FIFO under load in seconds).
const STRANDED_AFTER: chrono::TimeDelta = chrono::TimeDelta::seconds(10);

/// How much longer an order whose message was sent again waits before it counts as lost
/// again: a book that is only slow (a burst on a slow store) is not sent a copy every
/// [`STRANDED_AFTER`], which would only lengthen its queue.
const RESENT_GRACE: chrono::TimeDelta = chrono::TimeDelta::seconds(50);

/// Sends every book that waits for its market's open, once the market is open, its
/// uncrossing message, and again the message of every order its book has not placed for
/// [`STRANDED_AFTER`] (the local API does this every second; in AWS a schedule every
/// minute). Answers how many were sent.
pub async fn open_books(ports: Arc<Ports>) -> Result<usize, ApiError> {
    let Some(sequencer) = ports.sequencer.clone() else {
        return Ok(0);
    };
    let now = ports.clock.now();
    let send = |client_id, security_id, order_id| {
        let msg = BookMessage {
            client_id,
            security_id,
            order_id,
        };
        let (sequencer, ports) = (sequencer.clone(), ports.clone());
        async move {
            sequencer
                .send(&ports, msg)
                .await
                .map_err(|e| ApiError::internal_from("book message not sent", e))
        }
    };
    let mut sent = 0;
    for (client, security) in book::waiting(ports.store.as_ref()).await? {
        if book::trading_week(ports.store.as_ref(), &client, &security)
            .await?
            .is_open(now)
        {
            send(client, security, None).await?;
            sent += 1;
        }
    }
    let cutoff = shared::clock::timestamp(now - STRANDED_AFTER);
    for (client, security, order) in book::stranded(ports.store.as_ref(), &cutoff).await? {
        tracing::warn!(%client, %order, "an order its book never placed: its message goes again");
        let again = book::sent_again(
            &client,
            &security,
            &order,
            &shared::clock::timestamp(now + RESENT_GRACE),
        );
        send(client, security, Some(order)).await?;
        sent += 1;
        // Refused when the order was placed meanwhile (its mark is gone): nothing to move.
        if ports.store.write(vec![again]).await.is_err() {
            tracing::debug!("arrival mark gone before its time moved");
        }
    }
    Ok(sent)
}

/// The expiry of `Day` and `Other` orders: every hour of every day (a security's own hours
/// may close at any hour, and the ATS's calendar has no holidays, CONTRACT), and on the
/// operator's run-now. Orders past their expiry never match before it runs.
pub const EXPIRY_BATCH: Batch = Batch {
    name: "ats-expiry",
    zone: EASTERN,
    hours: &[
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
    ],
    every_day: true,
    due: batch_due!(expiry_due),
    process: batch_process!(expire_one),
};

async fn expiry_due(ports: Arc<Ports>) -> Result<Vec<Due>, ApiError> {
    let now = ports.clock.now().timestamp();
    let due = book::expired(ports.store.as_ref(), now).await?;
    Ok(due.into_iter().map(|(client_id, id)| Due { client_id, id }).collect())
}

/// Expires order `id` if it is still on the book and past its expiry.
async fn expire_one(ctx: Ctx, id: String) -> Result<bool, ApiError> {
    ctx.transact(async move |ctx, _| {
        let now = ctx.app.clock.now();
        let stored = match book::order(ctx.store(), ctx.client_id(), &id).await? {
            Some(o) if o.rec.order_status.is_open() && expired(&o.rec, now) => o,
            _ => return Ok(Plan::answer(false)),
        };
        let (writes, events) = ended(&ctx, &stored, now)?;
        Ok(Plan::new(writes, true).events(events))
    })
    .await
}

/// `POST /operator/batches/ats-expiry/run`: `{"batch": "ats-expiry", "processed": N}`.
async fn run_expiry(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    EXPIRY_BATCH.run_for_operator(&octx, &req).await
}

pub fn routes() -> Routes {
    Routes::new().operator(
        Method::POST,
        "/operator/batches/ats-expiry/run",
        operator_op!(run_expiry),
    )
}

/// Whether an order's status and expiry put it on a live book now.
pub fn live_now(o: &AtsOrder, now: DateTime<Utc>) -> bool {
    o.order_status.is_open() && !expired(o, now)
}

/// Hands a live order to its book.
pub async fn place(ctx: &Ctx, o: &AtsOrder) {
    if !o.order_status.is_open() {
        return;
    }
    let Some(sequencer) = ctx.app.sequencer.clone() else {
        tracing::error!(order = %o.order_id, "no sequencer in this function: the order waits");
        return;
    };
    let msg = BookMessage {
        client_id: ctx.client_id().to_owned(),
        security_id: o.security_id.clone(),
        order_id: Some(o.order_id.clone()),
    };
    if let Err(e) = sequencer.send(&ctx.app, msg).await {
        tracing::error!(order = %o.order_id, error = %e, "order not handed to its book");
    }
}
