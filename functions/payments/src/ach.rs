//! ACH fund moves: externalFundMove (every rule of part 3, in CONTRACT's order of checks),
//! requestForVoidACH, getAchPendingId, getExternalFundMove, getExternalFundMoveInfo,
//! getExternalFundMoveHistory, updateExternalFundMoveStatus and
//! updateExternalFundMoveApprovedStatus. A trade is funded once: the fund-once marker
//! admits one move in `Pending`, `Submitted` or `Settled` at a time, and the pending-ACH
//! marker keeps the trade operations' `150` while the move is `Pending`.

use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{json, Value};
use shared::billing::billing;
use shared::mask::MASK;
use shared::model::ids::{no_trade, numeric_id, AccountId, IssuerId};
use shared::model::payments::{
    ach_blocked, already_funding, check_aba, fund_amount, money, no_provider, refund_under_way, FundMove,
    FundMoveEvent, FundStatus, FUND_MOVE, R01, SANDBOX_R01, SANDBOX_SETTLED, STATUS_METHOD,
};
use shared::model::trade::{wrong_status, Trade, TradeStatus};
use shared::records::active_account;
use shared::records::issuer::live_issuer;
use shared::records::link::primary_party;
use shared::records::payments as pay;
use shared::records::trade;
use shared::records::{offering, Stored};
use shared::store::Write;
use shared::webhooks::{view_event, Event};
use shared::{op, ApiError, Ctx, Environment, Params, Plan, Reply, Routes};

/// `234`: the trade total is above the client's maximum single ACH amount.
fn over_max(max: Decimal) -> ApiError {
    ApiError::coded(
        "234",
        format!("Trade total exceeds the maximum single ACH amount of {}", money(max)),
    )
}

/// `721`: the amount is more than 7 % above the trade total.
fn over_total() -> ApiError {
    ApiError::coded("721", "Amount exceeds the trade total by more than 7%")
}

/// `106` naming `amount`: it does not cover the trade total. Part 3 frames the amount as the
/// total, up to 7 % above it; less would fund the trade with money that never came.
fn under_total(total: Decimal) -> ApiError {
    ApiError::invalid("amount", format!("must cover the trade total of {}", money(total)))
}

/// The whole cents of an amount: a total finer than a cent (`7 x 0.335 = 2.345`) is covered
/// by `2.34`, as a bank moves cents.
fn whole_cents(amount: Decimal) -> Decimal {
    amount.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::ToZero)
}

/// `212`: no (pending) fund move answers the request.
fn none_pending() -> ApiError {
    ApiError::coded("212", "No pending ACH records for this account")
}

/// `224`: the fund move is no longer `Pending`.
fn not_pending() -> ApiError {
    ApiError::coded("224", "ACH fund move is not in pending status")
}

/// The trade must be an ACH trade (`194`).
fn not_ach() -> ApiError {
    ApiError::coded("194", "Trade is not an ACH trade")
}

/// The move a batch finds `Pending` that pays into an offering no longer taking investments
/// (closed, cancelled or deleted since the move was made), voided instead of collected:
/// CONTRACT's offering takes no money once it stops taking investments. `None` otherwise.
pub async fn void_if_offering_ended(ctx: &Ctx, m: &Stored<FundMove>) -> Result<Option<FundMove>, ApiError> {
    if !m.rec.pays_for_trade() || m.rec.offering_id.is_empty() {
        return Ok(None);
    }
    let ended = offering::load(ctx.store(), ctx.client_id(), &m.rec.offering_id)
        .await?
        .is_none_or(|o| !o.rec.accepts_investments());
    Ok(ended.then(|| {
        m.rec.moved(
            FundStatus::Voided,
            "Voided: the offering no longer accepts investments",
            &ctx.now(),
        )
    }))
}

/// The writes and webhook of a move changing from `before` to `after`: the record, the
/// markers it leaves, and `updateExternalFundMoveStatus` unless `silent` (a void).
pub fn move_writes(
    client: &str,
    before: &Stored<FundMove>,
    after: &FundMove,
    silent: bool,
) -> Result<(Vec<Write>, Vec<Event>), ApiError> {
    let writes = pay::move_change(client, before, after)?;
    // Custody fund moves have no status webhook (part 1 names none).
    let events = if silent || after.is_custody() {
        Vec::new()
    } else {
        vec![view_event(STATUS_METHOD, &after.status_event())]
    };
    Ok((writes, events))
}

/// The trade funded (`FUNDED`) once its money settled, or back to `CREATED` when a settled
/// move is returned; `None` when the status does not change. Only a `CREATED` trade becomes
/// `FUNDED`: one cancelled meanwhile stays cancelled.
fn trade_after(trade: &Trade, status: FundStatus, now: &str) -> Option<Trade> {
    let target = match status {
        FundStatus::Settled if trade.status() == TradeStatus::Created => "FUNDED",
        FundStatus::Returned | FundStatus::Declined if trade.status() == TradeStatus::Funded => "CREATED",
        _ => return None,
    };
    let mut after = trade.clone();
    after.status = target.into();
    after.stamps.updated = now.to_owned();
    Some(after)
}

/// Moves the trade along with its debit's status (the writes, or none; a refund never moves
/// the trade).
pub fn trade_writes(client: &str, m: &FundMove, trade: &Stored<Trade>, now: &str) -> Result<Vec<Write>, ApiError> {
    if !m.pays_for_trade() {
        return Ok(Vec::new());
    }
    match trade_after(&trade.rec, m.fund_status, now) {
        Some(after) => trade::replace(client, trade, &after),
        None => Ok(Vec::new()),
    }
}

/// [`trade_writes`], or, when the move leaves the trade as it is, the check that the trade is
/// still as read: a payment that raced a cancellation, an edit or a change of type fails its
/// transaction, and its retry finds the trade as it now is (a cancelled trade is never paid).
pub fn trade_writes_or_check(
    client: &str,
    m: &FundMove,
    trade: &Stored<Trade>,
    now: &str,
) -> Result<Vec<Write>, ApiError> {
    let writes = trade_writes(client, m, trade, now)?;
    Ok(if writes.is_empty() {
        vec![shared::records::unchanged(client, trade)]
    } else {
        writes
    })
}

/// The trade a payment is for, in CONTRACT's order: the account (`148`), the offering when
/// named (`138`), the trade of that account and offering (`188`), the account's primary
/// party (`135`), an offering that still accepts investments (`106`); with the escrow
/// account of the trade's offering (empty: none).
pub async fn paid_trade(
    ctx: &Ctx,
    account: &str,
    offering_id: Option<&str>,
    trade_id: &str,
) -> Result<(Stored<Trade>, String), ApiError> {
    let (store, client) = (ctx.store(), ctx.client_id());
    active_account(ctx, account).await?;
    let named = match offering_id {
        Some(o) => Some(offering::live(store, client, o).await?),
        None => None,
    };
    let trade = trade::existing(store, client, trade_id).await?;
    let other_offering = offering_id.is_some_and(|o| trade.rec.offering_id != o);
    if trade.rec.account_id != account || other_offering || trade.rec.deleted {
        return Err(no_trade());
    }
    if primary_party(store, client, account).await?.is_none() {
        return Err(shared::model::link::no_primary_party());
    }
    let offering = match named {
        Some(o) => Some(o),
        None => offering::load(store, client, &trade.rec.offering_id).await?,
    };
    // No new money into a deal that takes no more investments (CONTRACT: until closed,
    // cancelled or deleted), as createTrade refuses one; a deleted one is `138` everywhere.
    if let Some(o) = &offering {
        if o.rec.deleted {
            return Err(shared::model::ids::no_offering());
        }
        o.rec.require_accepting_investments()?;
    }
    let escrow = offering.map(|o| o.rec.escrow_account_number).unwrap_or_default();
    Ok((trade, escrow))
}

/// The trade can take a payment: no move holds it (`150` while one is `Pending`, `210` once
/// `Submitted` or `Settled`; `150` while the refund of its settled money is under way), and
/// it is `CREATED` (`190`).
pub async fn not_funded(ctx: &Ctx, trade: &Trade) -> Result<(), ApiError> {
    if let Some(held) = pay::holding_move(ctx.store(), ctx.client_id(), &trade.id).await? {
        if held.rec.is_refund() {
            return Err(refund_under_way());
        }
        return Err(already_funding(held.rec.fund_status));
    }
    if trade.status() != TradeStatus::Created {
        return Err(wrong_status(format!("Trade status {} cannot be funded", trade.status)));
    }
    Ok(())
}

/// What externalFundMove takes, parsed (`106`, `732`).
struct Request {
    account: String,
    offering: String,
    trade: String,
    amount: Decimal,
    description: String,
    ip: String,
}

fn parse(ctx: &Ctx, p: &Params) -> Result<Request, ApiError> {
    let account = p.req(&["accountId"])?;
    let offering = numeric_id("offeringId", &p.req(&["offeringId"])?)?;
    let trade = numeric_id("tradeId", &p.req(&["tradeId"])?)?;
    let amount = p.req(&["amount"])?;
    let description = p.req(&["description"])?;
    // Required, its value discarded (part 3): any whole number.
    numeric_id("checkNumber", &p.req(&["checkNumber"])?)?;
    let amount = fund_amount(&amount)?;
    Ok(Request {
        account: AccountId::parse(&account)?.as_str().to_owned(),
        offering,
        trade,
        amount,
        description,
        ip: p.opt(&["createdIpAddress"])?.unwrap_or_else(|| ctx.ip.to_string()),
    })
}

/// `POST /v3/externalFundMove`: `accountId`, `offeringId`, `tradeId`, `amount` (two places
/// at most), `description`, `checkNumber` (value discarded) required; `createdIpAddress`
/// optional, `NickName` ignored. Checks in CONTRACT's order: 106/732, 148, 138, 188, 135,
/// 194, 149, 773, 150/210 (then `190` for a trade not `CREATED`), 207/215, 234, 721 (106 for
/// an amount below the total), 211.
/// Answers `TradeFinancialDetails` = [the move]; webhook `externalFundMove` (`tradeId`,
/// `RefNum`). In the sandbox, the external account's nickname `Test ACH Settled` or
/// `Test ACH R01` settles or returns the move inside the call (each step's webhook).
pub async fn fund_move(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["amount", "description", "checkNumber", "createdIpAddress"])?;
    let req = parse(&ctx, &p)?;
    let created = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let store = ctx.store();
            let (trade, escrow) = paid_trade(&ctx, &req.account, Some(&req.offering), &req.trade).await?;
            if trade.rec.transaction_type != "ACH" {
                return Err(not_ach());
            }
            let ext = pay::usable_external(store, client, &req.account).await?;
            if pay::ach_blocked(store, client, &req.account).await? {
                return Err(ach_blocked());
            }
            not_funded(&ctx, &trade.rec).await?;
            check_aba(&ext.routing_number)?;
            let (settings, _) = pay::settings(store, client).await?;
            if trade.rec.total_amount > settings.max_single_ach {
                return Err(over_max(settings.max_single_ach));
            }
            if req.amount > trade.rec.total_amount * Decimal::new(107, 2) {
                return Err(over_total());
            }
            if req.amount < whole_cents(trade.rec.total_amount) {
                return Err(under_total(trade.rec.total_amount));
            }
            if settings.ach_provider.is_none() {
                return Err(no_provider());
            }
            let now = ctx.now();
            let pending = FundMove {
                ref_num: ctx.next_id(FUND_MOVE).await?,
                account_id: req.account.clone(),
                trade_id: req.trade.clone(),
                offering_id: req.offering.clone(),
                kind: "debit".into(),
                amount: req.amount,
                fund_status: FundStatus::Pending,
                transaction_status: "Pending".into(),
                errors: String::new(),
                description: req.description.clone(),
                bank_name: ext.bank_name.clone(),
                account_fullname: ext.full_name.clone(),
                account_number: ext.account_number.clone(),
                routing_number: ext.routing_number.clone(),
                created_date: now.clone(),
                updated_date: now.clone(),
                created_ip: req.ip.clone(),
                card: None,
                escrow_account: escrow,
                test_entry: false,
                refund_of: String::new(),
            };
            let mut writes = billing(&ctx, "externalFundMove", &req.account, &pending.ref_num)?;
            let mut events = vec![view_event(
                "externalFundMove",
                &FundMoveEvent {
                    trade_id: &pending.trade_id,
                    ref_num: &pending.ref_num,
                },
            )];
            // The sandbox's nicknames: submitted, then settled or returned, inside the call.
            let outcome = match ext.nickname.as_str() {
                _ if ctx.app.env == Environment::Production => None,
                SANDBOX_SETTLED => Some((FundStatus::Settled, "")),
                SANDBOX_R01 => Some((FundStatus::Returned, R01)),
                _ => None,
            };
            let last = match outcome {
                None => pending,
                Some((status, error)) => {
                    let submitted = pending.moved(FundStatus::Submitted, "", &now);
                    let done = submitted.moved(status, error, &now);
                    events.push(view_event(STATUS_METHOD, &submitted.status_event()));
                    events.push(view_event(STATUS_METHOD, &done.status_event()));
                    done
                }
            };
            writes.extend(trade_writes_or_check(client, &last, &trade, &now)?);
            writes.extend(pay::move_new(client, &last)?);
            Ok(Plan::new(writes, last).events(events))
        })
        .await?;
    Ok(Reply::ok().with_value("TradeFinancialDetails", json!([created.created_view()])))
}

/// The `accountId` and `RefNum` of a request about one move: `106` when missing; the move of
/// that account, or `212`.
async fn the_move(ctx: &Ctx, p: &Params) -> Result<Stored<FundMove>, ApiError> {
    let account = p.req(&["accountId"])?;
    let ref_num = numeric_id("RefNum", &p.req(&["RefNum", "refNum"])?).map_err(|_| none_pending())?;
    let account = AccountId::parse(&account)?;
    match pay::fund_move(ctx.store(), ctx.client_id(), &ref_num).await? {
        Some(m) if m.rec.account_id == account.as_str() && !m.rec.is_card() && !m.rec.is_custody() => Ok(m),
        _ => {
            shared::records::live::<shared::model::Account>(ctx, account.as_str(), shared::model::ids::no_account)
                .await?;
            Err(none_pending())
        }
    }
}

/// Move `ref_num` read again in a change's attempt: `224` once it is no longer `Pending`.
async fn still_pending(ctx: &Ctx, ref_num: &str) -> Result<Stored<FundMove>, ApiError> {
    let stored = pay::fund_move(ctx.store(), ctx.client_id(), ref_num)
        .await?
        .ok_or_else(none_pending)?;
    if stored.rec.fund_status != FundStatus::Pending {
        return Err(not_pending());
    }
    Ok(stored)
}

/// `POST /v3/requestForVoidACH`: `accountId`, `RefNum`. Voids a `Pending` debit (`224`
/// otherwise, a refund included: part 3 lets the client cancel its debits before the batch,
/// and a refund is the service's to pay; `212` for an unknown one); the trade may be funded
/// again. No status webhook. Answers `investorExternalAccountDetails` = `Status Updated
/// Successfully` (OBSERVED).
pub async fn void(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let first = the_move(&ctx, &p).await?;
    if first.rec.is_refund() {
        return Err(ApiError::coded(
            "224",
            format!(
                "ACH fund move {} is a refund: only a pending debit can be voided",
                first.rec.ref_num
            ),
        ));
    }
    let ref_num = first.rec.ref_num.clone();
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let stored = still_pending(&ctx, &ref_num).await?;
        let after = stored.rec.moved(FundStatus::Voided, "", &ctx.now());
        let (writes, events) = move_writes(client, &stored, &after, true)?;
        Ok(Plan::new(writes, ()).events(events))
    })
    .await?;
    Ok(Reply::ok().with_value(
        "investorExternalAccountDetails",
        Value::from("Status Updated Successfully"),
    ))
}

/// `POST /v3/getAchPendingId`: `accountId`; `investorExternalAccountDetails` = the account's
/// `Pending` moves (part 3's pending-list fields); `212` with no array when there are none.
pub async fn pending(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = AccountId::param(&p, &["accountId"])?;
    shared::records::live::<shared::model::Account>(&ctx, account.as_str(), shared::model::ids::no_account).await?;
    let moves = pay::account_moves(ctx.store(), ctx.client_id(), account.as_str(), false).await?;
    let list: Vec<Value> = moves
        .iter()
        .filter(|m| m.fund_status == FundStatus::Pending)
        .map(|m| shared::model::object(&m.pending_view()).into())
        .collect();
    if list.is_empty() {
        return Err(none_pending());
    }
    Ok(Reply::ok().with_value("investorExternalAccountDetails", Value::Array(list)))
}

/// `POST /v3/getExternalFundMove`: `accountId`, `RefNum`; `investorExternalAccountDetails` =
/// [the move] (the return code in `errors`); `212` for an unknown `RefNum`.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let m = the_move(&ctx, &p).await?;
    Ok(Reply::ok().with_value("investorExternalAccountDetails", json!([m.rec.view()])))
}

/// getExternalFundMoveInfo's `ACHDetails` (OBSERVED).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AchDetails<'a> {
    account_id: &'a str,
    fund_status: &'static str,
    trade_id: &'a str,
    created_date: &'a str,
    #[serde(rename = "developerAPIKey")]
    developer_api_key: &'static str,
    account_name: String,
    client_name: &'static str,
    client_id: &'static str,
    issue_name: String,
}

/// `POST /v3/getExternalFundMoveInfo`: `accountId`, `RefNum`; `investorExternalAccountDetails`
/// = {`fundStatus`, `error`} (the return code in `error`) and `ACHDetails` (OBSERVED); `212`
/// for an unknown `RefNum`.
pub async fn info(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let m = the_move(&ctx, &p).await?.rec;
    let store = ctx.store();
    let account = shared::records::load::<shared::model::Account>(store, ctx.client_id(), &m.account_id).await?;
    let offering = offering::load(store, ctx.client_id(), &m.offering_id).await?;
    let details = AchDetails {
        account_id: &m.account_id,
        fund_status: m.fund_status.name(),
        trade_id: &m.trade_id,
        created_date: &m.created_date,
        developer_api_key: MASK,
        account_name: account.map(|a| a.rec.account_name).unwrap_or_default(),
        // Masked in responses (part 1, Conventions 8), as getAllTrades answers them.
        client_name: MASK,
        client_id: MASK,
        issue_name: offering.map(|o| o.rec.issue_name).unwrap_or_default(),
    };
    Ok(Reply::ok()
        .with_value(
            "investorExternalAccountDetails",
            json!({"fundStatus": m.fund_status.name(), "error": m.errors}),
        )
        .with("ACHDetails", &details))
}

/// `POST /v3/getExternalFundMoveHistory`: `accountId` (or, OBSERVED-MORE, `issuerId`);
/// `accountDetails` = every move of the account, oldest first (OBSERVED-MORE's fields plus
/// `type`: `debit` or `refund`). An issuer's is empty: ACH moves debit and refund investors.
pub async fn history(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    if p.opt(&["accountId"])?.is_none() && p.opt(&["issuerId"])?.is_some() {
        let issuer = IssuerId::param(&p, &["issuerId"])?;
        live_issuer(ctx.store(), ctx.client_id(), &issuer).await?;
        return Ok(Reply::ok().with_value("accountDetails", Value::Array(Vec::new())));
    }
    let account = AccountId::param(&p, &["accountId"])?;
    shared::records::live::<shared::model::Account>(&ctx, account.as_str(), shared::model::ids::no_account).await?;
    let moves = pay::account_moves(ctx.store(), ctx.client_id(), account.as_str(), false).await?;
    let list: Vec<Value> = moves.iter().map(|m| shared::model::object(&m.view()).into()).collect();
    Ok(Reply::ok().with_value("accountDetails", Value::Array(list)))
}

/// `POST /v3/updateExternalFundMoveStatus`: `accountId`, `RefNum`. A client never moves
/// money (CONTRACT): answers the move as it is, as `investorExternalAccountDetails`.
pub async fn status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    get(ctx, p).await
}

/// `POST /v3/updateExternalFundMoveApprovedStatus`: `accountId`, `RefNum`,
/// `transactionstatus` (`Pending` or `Approved`). Sets it on a `Pending` move (`224`
/// otherwise); `fundStatus` and the trade never change (CONTRACT). Answers the move;
/// webhook `updateExternalFundMoveApprovedStatus` with part 1's status fields.
pub async fn approved_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["transactionstatus"])?;
    let wanted: String = match p
        .req(&["transactionstatus", "transactionStatus"])?
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "pending" => "Pending".into(),
        "approved" => "Approved".into(),
        _ => return Err(ApiError::invalid("transactionstatus", "must be Pending or Approved")),
    };
    let first = the_move(&ctx, &p).await?;
    let ref_num = first.rec.ref_num.clone();
    let after = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let stored = still_pending(&ctx, &ref_num).await?;
            let mut after = stored.rec.clone();
            after.transaction_status.clone_from(&wanted);
            after.updated_date = ctx.now();
            let write = pay::move_put(client, &after, Some(stored.version))?;
            let event = view_event("updateExternalFundMoveApprovedStatus", &after.status_event());
            Ok(Plan::new(vec![write], after).event(event))
        })
        .await?;
    Ok(Reply::ok().with_value("investorExternalAccountDetails", json!([after.view()])))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("externalFundMove", op!(fund_move))
        .op("requestForVoidACH", op!(void))
        .op("getAchPendingId", op!(pending))
        .op("getExternalFundMove", op!(get))
        .op("getExternalFundMoveInfo", op!(info))
        .op("getExternalFundMoveHistory", op!(history))
        .op("updateExternalFundMoveStatus", op!(status))
        .op("updateExternalFundMoveApprovedStatus", op!(approved_status))
}
