//! Orders (part 3, "ATS"; CONTRACT, "ATS"): createOrder, cancelOrder, getOrder,
//! updateOrder, getClob, getMatchedTrade, matchedTradenotify and
//! getIssuerApprovedSecurities. An order is stored, answered, then handed to its book,
//! where the worker matches it.

use chrono::NaiveDate;
use matching::{Book, Quote, Side};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{json, Value};
use shared::calendar::{local_date, EASTERN};
use shared::model::ats::{execution_time, invalid, no_match, no_order, AtsOrder, OrderStatus, ORDER};
use shared::model::ids::{numeric_id, IssuerId};
use shared::model::{validate, Offering};
use shared::records::ats as book;
use shared::records::{self, Stored};
use shared::webhooks::{view_event, Event};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::book::{core_order, live_now, order_event, place};
use crate::support::security;

/// A value that must be one of `allowed` (compared without case), answered as spelled there.
fn one_of(p: &Params, name: &str, allowed: &[&'static str]) -> Result<&'static str, ApiError> {
    let v = p.req(&[name])?;
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(v.trim()))
        .copied()
        .ok_or_else(|| invalid(name, &format!("one of {}", allowed.join(", "))))
}

/// A whole number of shares in plain digits, at least 1 (and at most a trillion).
fn shares(name: &str, raw: &str) -> Result<u64, ApiError> {
    u64::try_from(validate::units(name, raw)?)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| invalid(name, "a whole number of at least 1"))
}

/// A price: an amount in plain notation (no `1e2`, no sign), positive, at most six decimal
/// places, below a trillion.
fn price(raw: &str) -> Result<Decimal, ApiError> {
    let bad = || invalid("price", "a positive decimal with at most six places");
    validate::amount("price", raw).map_err(|_| bad()).and_then(|d| {
        (d > Decimal::ZERO && d < Decimal::from(1_000_000_000_000i64))
            .then(|| d.normalize())
            .ok_or_else(bad)
    })
}

/// `MM-DD-YYYY`, today (Eastern) or later.
fn expiration_date(ctx: &Ctx, raw: &str) -> Result<NaiveDate, ApiError> {
    let date =
        NaiveDate::parse_from_str(raw.trim(), "%m-%d-%Y").map_err(|_| invalid("expirationDate", "MM-DD-YYYY"))?;
    if date < local_date(ctx.app.clock.now(), EASTERN) {
        return Err(invalid("expirationDate", "today or later"));
    }
    Ok(date)
}

/// An account of the caller, live and not archived (`148`).
async fn member(ctx: &Ctx, id: &str) -> Result<String, ApiError> {
    Ok(records::active_account(ctx, id.trim()).await?.rec.id)
}

/// When an order going live now expires (epoch seconds): `Day` at the close of the session
/// it goes live in (the next one when closed), `Other` at the close of its date, `GTC` never.
pub async fn expiry(ctx: &Ctx, o: &AtsOrder) -> Result<Option<i64>, ApiError> {
    let week = book::trading_week(ctx.store(), ctx.client_id(), &o.security_id).await?;
    let now = ctx.app.clock.now();
    Ok(match o.expiration.as_str() {
        "Day" => week.day_close(now).map(|t| t.timestamp()),
        "Other" => NaiveDate::parse_from_str(&o.expiration_date, "%m-%d-%Y")
            .ok()
            .map(|d| week.close_of(d).timestamp()),
        _ => None,
    })
}

/// `POST /v3/createOrder`: part 3's parameters (106 for a missing or invalid one), then the
/// security (`138`), the member and the account (`148`). `Pending` while the operator
/// requires approval for the issuer, else `Live` (a client-supplied status is ignored).
/// Answers `orderDetails` (`token` only when sent); webhook `createOrder`.
async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(
        &p,
        &[
            "type",
            "action",
            "quantity",
            "price",
            "expiration",
            "expirationDate",
            "disclosePrice",
            "solicited",
            "contingencies",
            "minimumThreshold",
            "token",
        ],
    )?;
    let member_id = p.req(&["memberid", "memberId"])?;
    let issuer_id = p.req(&["issuerid", "issuerId"])?;
    let security_id = p.req(&["securityid", "securityId"])?;
    let kind = one_of(&p, "type", &["Limit", "RFQ"])?;
    let side = one_of(&p, "action", &["Buy", "Sell"])?;
    let quantity = shares("quantity", &p.req(&["quantity"])?)?;
    let price = price(&p.req(&["price"])?)?;
    let expiration = one_of(&p, "expiration", &["GTC", "Day", "Other"])?;
    // A yes/no flag: a JSON boolean is its word (docs/decisions.md).
    let disclose = match p.req(&["disclosePrice"])?.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" => "Yes",
        "no" | "false" => "No",
        _ => return Err(invalid("disclosePrice", "one of Yes, No")),
    };
    let solicited = one_of(&p, "solicited", &["Solicited", "Unsolicited"])?;
    // A typed parameter sent is checked even where its order ignores it.
    let sent = |name: &str| p.opt(&[name]).map(|v| v.filter(|v| !v.trim().is_empty()));
    let expiration_date = match expiration {
        "Other" => {
            let raw = p.req(&["expirationDate"])?;
            expiration_date(&ctx, &raw)?.format("%m-%d-%Y").to_string()
        }
        _ => {
            if let Some(raw) = sent("expirationDate")? {
                NaiveDate::parse_from_str(raw.trim(), "%m-%d-%Y")
                    .map_err(|_| invalid("expirationDate", "MM-DD-YYYY"))?;
            }
            String::new()
        }
    };
    let contingencies = match p.opt(&["contingencies"])?.as_deref().map(str::trim) {
        None | Some("") => "",
        Some(c) if c.eq_ignore_ascii_case("None") => "",
        Some(c) if c.eq_ignore_ascii_case("All or None") => "All or None",
        Some(c) if c.eq_ignore_ascii_case("Minimum Quantity") => "Minimum Quantity",
        Some(_) => return Err(invalid("contingencies", "All or None, Minimum Quantity or None")),
    };
    let minimum_threshold = match contingencies {
        "Minimum Quantity" => {
            let n = shares("minimumThreshold", &p.req(&["minimumThreshold"])?)?;
            if n > quantity {
                return Err(invalid("minimumThreshold", "at most the quantity"));
            }
            n
        }
        _ => {
            if let Some(raw) = sent("minimumThreshold")? {
                shares("minimumThreshold", &raw)?;
            }
            0
        }
    };
    let token = p.opt(&["token"])?;
    let account = p.opt(&["accountid", "accountId"])?.filter(|a| !a.trim().is_empty());
    let offering = security(&ctx, &security_id, Some(&issuer_id)).await?;
    let member_id = member(&ctx, &member_id).await?;
    let account_id = match account {
        Some(a) => member(&ctx, &a).await?,
        None => String::new(),
    };
    let now = ctx.app.clock.now();
    let pending = book::approval_required(ctx.store(), ctx.client_id(), &offering.rec.issuer_id).await?;
    let mut order = AtsOrder {
        order_id: ctx.next_id(ORDER).await?,
        security_id: offering.rec.id.clone(),
        security_name: offering.rec.issue_name.clone(),
        issuer_id: offering.rec.issuer_id.clone(),
        member_id,
        account_id,
        side: side.into(),
        kind: kind.into(),
        shares: quantity,
        remaining_shares: quantity,
        price,
        expiration: expiration.into(),
        expiration_date,
        expires_at: None,
        disclose_price: disclose == "Yes",
        solicited: solicited.into(),
        contingencies: contingencies.into(),
        minimum_threshold,
        order_status: if pending {
            OrderStatus::Pending
        } else {
            OrderStatus::Live
        },
        token,
        seq: 0,
        matches: Vec::new(),
        execution_time: execution_time(now),
        created_date: ctx.now(),
        updated_date: ctx.now(),
        cancel_date: String::new(),
        deleted: false,
    };
    if !pending {
        order.expires_at = expiry(&ctx, &order).await?;
    }
    let writes = book::insert_order(ctx.client_id(), &order)?;
    let event = view_event("createOrder", &order.created_view());
    let order = ctx
        .transact(async move |_, _| Ok(Plan::new(writes.clone(), order.clone()).event(event.clone())))
        .await?;
    place(&ctx, &order).await;
    Ok(Reply::ok().with_value("orderDetails", json!(order.created_view())))
}

/// The order a request names by `orderid` (`106` when missing or unknown).
async fn named_order(ctx: &Ctx, p: &Params) -> Result<Stored<AtsOrder>, ApiError> {
    let id = p.req(&["orderid", "orderId"])?;
    let id = numeric_id("orderid", &id).map_err(|_| no_order())?;
    book::order(ctx.store(), ctx.client_id(), &id)
        .await?
        .ok_or_else(no_order)
}

/// Order `id` read again in a change's attempt: `106` once it is terminal.
async fn not_terminal(ctx: &Ctx, id: &str) -> Result<Stored<AtsOrder>, ApiError> {
    let stored = book::order(ctx.store(), ctx.client_id(), id)
        .await?
        .ok_or_else(no_order)?;
    if stored.rec.order_status.is_terminal() {
        let status = stored.rec.order_status.name();
        return Err(invalid("orderid", &format!("the order is {status}")));
    }
    Ok(stored)
}

/// `POST /v3/cancelOrder`: `orderid`. `Pending`, `Live` or `Partially Executed` become
/// `Cancelled` (fills kept: filled = total − remaining); a terminal order is `106` and
/// nothing changes. Answers `orderStatus`; webhooks `cancelOrder` and `updateOrder`.
async fn cancel(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = named_order(&ctx, &p).await?.rec.order_id;
    let after = ctx
        .transact(async move |ctx, _| {
            let stored = not_terminal(&ctx, &id).await?;
            let mut after = stored.rec.clone();
            after.order_status = after.ended(false);
            after.updated_date = ctx.now();
            after.cancel_date = after.updated_date.clone();
            let writes = book::change_order(ctx.client_id(), &stored, &after)?;
            let events = [
                Event::new("cancelOrder")
                    .field("orderId", after.order_id.clone())
                    .field("orderStatus", after.order_status.name().to_owned()),
                order_event(&after),
            ];
            Ok(Plan::new(writes, after).events(events))
        })
        .await?;
    Ok(Reply::ok().with_value("orderStatus", json!(after.order_status.name())))
}

/// `POST /v3/getOrder`: `orderid`. Answers `orderDetails` = [the order with
/// `number_shares`, `shares_remaining` and `matchedOrders`].
async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let o = named_order(&ctx, &p).await?.rec;
    Ok(Reply::ok().with_value("orderDetails", json!([o.detail()])))
}

/// `POST /v3/updateOrder` (designed, `docs/ats.md`): `orderid` with `quantity` (the new
/// total: above the filled shares and at most the current total; the order keeps its place)
/// and/or `price` (the order goes to the back of the book at the new price and matches
/// again). A terminal order is `106`. Answers `orderDetails` like getOrder; webhook
/// `updateOrder`.
async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["quantity", "price"])?;
    let id = named_order(&ctx, &p).await?.rec.order_id;
    let quantity = p.opt(&["quantity"])?.map(|q| shares("quantity", &q)).transpose()?;
    let new_price = p.opt(&["price"])?.map(|v| price(&v)).transpose()?;
    if quantity.is_none() && new_price.is_none() {
        return Err(invalid("quantity", "quantity or price is required"));
    }
    let after = ctx
        .transact(async move |ctx, _| {
            let stored = not_terminal(&ctx, &id).await?;
            let mut after = stored.rec.clone();
            if let Some(q) = quantity {
                if q <= after.filled() || q > after.shares {
                    return Err(invalid(
                        "quantity",
                        "above the filled shares and at most the order's total",
                    ));
                }
                if after.contingencies == "Minimum Quantity" && after.minimum_threshold > q {
                    return Err(invalid("quantity", "at least the minimum threshold"));
                }
                after.remaining_shares = q - after.filled();
                after.shares = q;
            }
            if let Some(p) = new_price.filter(|p| *p != after.price) {
                after.price = p;
                after.seq = 0;
            }
            after.updated_date = ctx.now();
            let writes = book::change_order(ctx.client_id(), &stored, &after)?;
            Ok(Plan::new(writes, after.clone()).event(order_event(&after)))
        })
        .await?;
    if after.seq == 0 {
        place(&ctx, &after).await;
    }
    Ok(Reply::ok().with_value("orderDetails", json!([after.detail()])))
}

/// How many of a side's book entries getClob lists a page to find its best level (it reads
/// the orders only until that level ends).
const CLOB_DEPTH: u32 = 100;

/// One side of the CLOB: `--`, `RFQ`, or the best price (hidden for `disclosePrice=No`)
/// with the shares at it.
#[derive(Serialize)]
struct Best {
    price: Value,
    shares: u64,
}

fn clob_side(quote: Quote<Decimal>) -> Value {
    match quote {
        Quote::None => json!("--"),
        Quote::Rfq => json!("RFQ"),
        Quote::Price {
            price,
            quantity,
            disclosed,
        } => json!(Best {
            price: if disclosed {
                json!(price)
            } else {
                json!("Not Disclosed")
            },
            shares: quantity,
        }),
    }
}

/// `POST /v3/getClob`: `securityID`, `issuerID` (an integer, part 3: `106` when not; `138`
/// unless an approved offering of the caller and its issuer). Answers `orderDetailsAll` with
/// the best live bid and offer from `Live` and `Partially Executed` orders.
async fn clob(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let security_id = p.req(&["securityID", "securityId"])?;
    let issuer_id = numeric_id("issuerID", &p.req(&["issuerID", "issuerId"])?)?;
    let offering = security(&ctx, &security_id, Some(&issuer_id)).await?;
    let now = ctx.app.clock.now();
    let mut core = Book::new();
    let mut rfq = [false, false];
    for (i, buy) in [true, false].into_iter().enumerate() {
        rfq[i] = book::has_rfq(ctx.store(), ctx.client_id(), &offering.rec.id, buy).await?;
        // Orders in priority order, read until the best live price's level ends, page after
        // page: orders expired but not yet taken off by the expiry batch are passed over.
        let mut best = None;
        let mut start = None;
        'pages: loop {
            let (ids, next) = book::top(ctx.store(), ctx.client_id(), &offering.rec.id, buy, CLOB_DEPTH, start).await?;
            for id in ids {
                let Some(o) = book::order(ctx.store(), ctx.client_id(), &id).await? else {
                    continue;
                };
                if !live_now(&o.rec, now) {
                    continue;
                }
                if best.is_some_and(|p| p != o.rec.price) {
                    break 'pages;
                }
                best = Some(o.rec.price);
                core.rest(core_order(&o.rec));
            }
            match next {
                Some(next) => start = Some(next),
                None => break,
            }
        }
    }
    let side = |s: Side, has_rfq: bool| match core.quote(s) {
        Quote::None if has_rfq => clob_side(Quote::Rfq),
        q => clob_side(q),
    };
    let all = json!({
        "securityID": offering.rec.id,
        "orderDetailsBid": side(Side::Buy, rfq[0]),
        "orderDetailsOffer": side(Side::Sell, rfq[1]),
    });
    Ok(Reply::ok().with_value("orderDetailsAll", all))
}

/// The match a request names by `matchId` (`106` when missing or unknown).
async fn named_match(ctx: &Ctx, p: &Params) -> Result<shared::model::ats::MatchedTrade, ApiError> {
    let id = p.req(&["matchId", "matchid"])?;
    let id = numeric_id("matchId", &id).map_err(|_| no_match())?;
    Ok(book::matched(ctx.store(), ctx.client_id(), &id)
        .await?
        .ok_or_else(no_match)?
        .rec)
}

/// `POST /v3/getMatchedTrade`: `matchId`. Answers `matchedTradeDetails` = [part 3's
/// matched-trade fields].
async fn matched_trade(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let m = named_match(&ctx, &p).await?;
    Ok(Reply::ok().with_value("matchedTradeDetails", json!([m.details()])))
}

/// `POST /v3/matchedTradenotify`: `matchId`. Sends the match's `matchedTradenotify` webhook
/// again and answers it like getMatchedTrade.
async fn notify(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let m = named_match(&ctx, &p).await?;
    let event = view_event("matchedTradenotify", &m.view()).without_token();
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    Ok(Reply::ok().with_value("matchedTradeDetails", json!([m.details()])))
}

#[derive(Serialize)]
struct ApprovedSecurity<'a> {
    #[serde(rename = "SecurityName")]
    name: &'a str,
    #[serde(rename = "SecurityID")]
    id: &'a str,
}

/// `POST /v3/getIssuerApprovedSecurities`: `issuerID` (an integer, `106` when not, as
/// getClob's; `136` unless an issuer of the caller). Answers `issuerDetails` = the issuer's offerings with status `Approved` and
/// virtual status `ACTIVE`, oldest first.
async fn approved_securities(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let issuer = IssuerId::parse(&numeric_id("issuerID", &p.req(&["issuerID", "issuerId"])?)?)?;
    records::issuer::live_issuer(ctx.store(), ctx.client_id(), &issuer).await?;
    let mut offerings = records::newest::<Offering>(&ctx, usize::MAX).await?;
    offerings.reverse();
    let securities: Vec<ApprovedSecurity> = offerings
        .iter()
        .filter(|o| o.issuer_id == issuer.as_str() && o.status == shared::model::offering::status::APPROVED)
        .map(|o| ApprovedSecurity {
            name: &o.issue_name,
            id: &o.id,
        })
        .collect();
    Ok(Reply::ok().with_value("issuerDetails", json!(securities)))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createOrder", op!(create))
        .op("cancelOrder", op!(cancel))
        .op("getOrder", op!(get))
        .op("updateOrder", op!(update))
        .op("getClob", op!(clob))
        .op("getMatchedTrade", op!(matched_trade))
        .op("matchedTradenotify", op!(notify))
        .op("getIssuerApprovedSecurities", op!(approved_securities))
}
