//! Trade status moves: updateTradeStatus, deleteTrade, cancelInvestment and its deprecated
//! alias fundReturnRequest. Every move follows the state table of
//! `shared::model::trade::TradeStatus::next` and commits the trade, its offering's counters
//! (units given back, open-trade count, funding totals) and its webhooks in one transaction;
//! a cancellation (`CANCELED`, `Rejected`) voids the trade's subscription documents still
//! out in that same transaction (`trade_esign::cancellation_voids`).

use crate::trade_esign::{self, Voids};
use shared::esign;
use shared::model::ids::AccountId;
use shared::model::payments::{refund_under_way, FundMove, FundStatus, Owner, FUND_MOVE};
use shared::model::trade::{ach_pending, wrong_status, Cancellation, Trade, TradeStatus};
use shared::records::payments as pay;
use shared::records::trade;
use shared::records::Stored;
use shared::store::Write;
use shared::webhooks::{view_event, Event};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::edits::{TradeFields, FIELD_NAMES};
use crate::support::{account_trade, guard_ach, ip_param, trade_id, trade_of};

/// The webhook a status change fires, also from inside cancelInvestment.
const STATUS_METHOD: &str = "updateTradeStatus";

/// After a cancellation committed: its envelopes voided at the provider too. The platform's
/// records (committed) are what the service answers and the webhooks said; a provider that
/// fails here (never the sandbox, whose envelopes are the platform's records) is logged, not
/// answered: the cancellation stands.
async fn void_at_provider(ctx: &Ctx, trade_id: &str, voids: &Voids) {
    if voids.keys.is_empty() {
        return;
    }
    if let Err(e) = voids.at_provider(ctx.client_id(), &esign::provider(ctx)).await {
        tracing::error!(error = %e, trade = trade_id, "subscription envelopes voided in the platform's records but not at the provider");
    }
}

/// The plan of a status move of the trade read as `before`: `after` with `voids` (the
/// subscription documents it voids), the pending-ACH check when `guarded`, then `events`
/// and the voids' webhooks. Answers the trade and its voids, to void at the provider once
/// committed.
fn move_plan(
    client: &str,
    before: &Stored<Trade>,
    after: Trade,
    mut voids: Voids,
    guarded: bool,
    events: impl IntoIterator<Item = Event>,
) -> Result<Plan<(Trade, Voids)>, ApiError> {
    let writes = trade::replace(client, before, &after)?;
    let trade_id = after.id.clone();
    let void_writes = std::mem::take(&mut voids.writes);
    let void_events = std::mem::take(&mut voids.events);
    let plan = Plan::new(writes, (after, voids)).writes(void_writes);
    Ok(guard_ach(plan, client, &trade_id, guarded)
        .events(events)
        .events(void_events))
}

/// Stamps the trade as updated now, by the caller.
fn touch(t: &mut Trade, ctx: &Ctx, now: &str) {
    now.clone_into(&mut t.stamps.updated);
    t.stamps.updated_ip = ctx.ip.to_string();
}

fn status_names() -> String {
    TradeStatus::ALL.map(TradeStatus::name).join(", ")
}

/// `POST /v3/updateTradeStatus`: `accountId`, `tradeId` and `tradeStatus` (alias
/// `orderStatus`) required; optional `field1`-`field3`, RR and principal fields, `closeId`
/// (applied with the move). The status is read loosely (`UNWIND_PENDING`, any casing) and
/// stored as sent. Moves only along the state table (`190` otherwise); an unknown status
/// is `106`. The current status again answers `101` and sends no webhook (optional fields
/// sent are still stored, and so is another spelling of it). Leaving `CREATED` for `CANCELED`
/// or `Rejected` needs no pending ACH fund move (`150`), and refunds anew settled money a
/// returned refund left holding the trade; leaving `FUNDED` for them or for `CREATED` refunds
/// settled money as cancelInvestment does. Answers `tradeDetails` = `[trade record]` with the new
/// `orderStatus`; fires `updateTradeStatus` (part 1's payload) when the status changed. A
/// move to `CANCELED` or `Rejected` voids the trade's subscription documents still out in
/// the same transaction (each firing `updateDocuSignStatus` `VOIDED`; the trade's
/// `esignStatus` follows).
pub async fn update_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELD_NAMES)?;
    let account = p.req(&["accountId"])?;
    let id = trade_id(&p)?;
    let sent = p.req(&["tradeStatus", "orderStatus"])?.trim().to_owned();
    let target = TradeStatus::parse(&sent)
        .ok_or_else(|| ApiError::invalid("tradeStatus", format!("must be one of {}", status_names())))?;
    let fields = TradeFields::parse(&p)?;
    // Checked after the other parameters: a malformed ID answers 148 as an unknown one.
    let account = AccountId::parse(&account)?;
    let (after, voids) = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let stored = account_trade(&ctx, &account, &id).await?;
            let current = stored.rec.holding().status;
            let moving = current != target;
            if moving && !current.can_move_to(target) {
                return Err(wrong_status(format!(
                    "Trade status {} cannot move to {}",
                    stored.rec.status, sent
                )));
            }
            let mut after = stored.rec.clone();
            let fields_changed = fields.apply(&mut after);
            // The same status in another spelling is stored as sent (CONTRACT, "Verbatim
            // values"), without a webhook: the status did not change.
            if !moving && !fields_changed && after.status == sent {
                return Ok(Plan::answer((after, Voids::default())));
            }
            after.status.clone_from(&sent);
            let now = ctx.now();
            touch(&mut after, &ctx, &now);
            let voids = if moving && matches!(target, TradeStatus::Canceled | TradeStatus::Rejected) {
                trade_esign::cancellation_voids(&ctx, &stored.rec, &mut after, &now).await?
            } else {
                Voids::default()
            };
            let guarded = moving && current == TradeStatus::Created && !target.holds_shares();
            // A funded trade cancelled, rejected or sent back to CREATED ("funds returned")
            // gives its money back as cancelInvestment does: settled money is never left on a
            // trade that is not funded.
            let money = if !moving || !target.is_unfunded() {
                Vec::new()
            } else if current == TradeStatus::Funded {
                cancelled_funding(&ctx, &id, &now).await?.0
            } else {
                // A refund that came back left its payment holding the trade.
                settled_money(&ctx, &id, &now).await?
            };
            let status_event = moving.then(|| after.status_event(STATUS_METHOD));
            let plan = move_plan(client, &stored, after, voids, guarded, status_event)?.writes(money);
            // Called funded while its refund is on the way back, the trade would count money
            // the investor is being paid back.
            Ok(if moving && target == TradeStatus::Funded {
                plan.check(pay::no_refund_under_way(client, &id), refund_under_way())
            } else {
                plan
            })
        })
        .await?;
    void_at_provider(&ctx, &after.id, &voids).await;
    Ok(details_reply(&after))
}

fn details_reply(t: &Trade) -> Reply {
    Reply::ok().with("tradeDetails", [t.details()])
}

/// `POST /v3/deleteTrade`: `accountId` and `tradeId` required, `errDesc` optional (stored as
/// the trade's `errors`). Only a `CREATED` trade (`190` otherwise, a deleted one included)
/// with no pending ACH fund move (`150`): it moves to `CANCELED` and is virtually deleted
/// (out of the lists and the purchase history, still readable by ID); its units go back to
/// the offering in the same transaction. Answers `tradeDetails` = `[{partyId, offeringId,
/// orderStatus}]`; fires `deleteTrade` (`tradeId`). Its subscription documents still out are
/// voided in the same transaction (as updateTradeStatus to `CANCELED`), and settled money a
/// returned refund left holding it is refunded anew.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let id = trade_id(&p)?;
    let err_desc = p.opt(&["errDesc"])?;
    let account = AccountId::parse(&account)?;
    let (after, voids) = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let stored = account_trade(&ctx, &account, &id).await?;
            if stored.rec.holding().status != TradeStatus::Created {
                return Err(wrong_status(format!(
                    "Trade status should be in CREATED (it is {})",
                    stored.rec.status
                )));
            }
            let mut after = stored.rec.clone();
            after.status = TradeStatus::Canceled.name().into();
            after.deleted = true;
            if let Some(e) = &err_desc {
                after.errors.clone_from(e);
            }
            let now = ctx.now();
            touch(&mut after, &ctx, &now);
            let voids = trade_esign::cancellation_voids(&ctx, &stored.rec, &mut after, &now).await?;
            let money = settled_money(&ctx, &id, &now).await?;
            let event = view_event("deleteTrade", &after.reference());
            Ok(move_plan(client, &stored, after, voids, true, [event])?.writes(money))
        })
        .await?;
    void_at_provider(&ctx, &after.id, &voids).await;
    Ok(Reply::ok().with("tradeDetails", [after.deleted_view()]))
}

/// cancelInvestment and fundReturnRequest: the same cancellation, answered under `key` and
/// fired as `method` (the name the client called).
async fn cancel(ctx: Ctx, p: Params, method: &'static str, key: &'static str) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let requested_by = p.req(&["requestedBy"])?;
    let reason = p.req(&["reason"])?;
    let notes = p.text(&["notes"])?;
    let ip = ip_param(&ctx, &p, &["createdIpAddress", "createdIPAddress"])?;
    // Owned: a captured reference would keep the handler's future from being `Send`.
    let method = method.to_owned();
    let (after, voids) = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let stored = trade_of(&ctx, &id).await?;
            let current = stored.rec.holding().status;
            let now = ctx.now();
            // A closed trade whose refund came back (returned or declined): its payment holds
            // it again, and cancelling it once more refunds that money anew.
            let refunding = match current {
                TradeStatus::Canceled | TradeStatus::Rejected => settled_money(&ctx, &id, &now).await?,
                _ => Vec::new(),
            };
            if !current.can_move_to(TradeStatus::Canceled) && refunding.is_empty() {
                return Err(wrong_status(format!(
                    "Only a CREATED or FUNDED trade can be cancelled (it is {})",
                    stored.rec.status
                )));
            }
            let mut after = stored.rec.clone();
            if !refunding.is_empty() {
                touch(&mut after, &ctx, &now);
                let event = view_event(&method, &after.cancel_event());
                return Ok(move_plan(client, &stored, after, Voids::default(), false, [event])?.writes(refunding));
            }
            after.status = TradeStatus::Canceled.name().into();
            after.cancellation = Some(Cancellation {
                requested_by: requested_by.clone(),
                reason: reason.clone(),
                notes: notes.clone(),
                ip: ip.clone(),
                date: now.clone(),
            });
            touch(&mut after, &ctx, &now);
            let voids = trade_esign::cancellation_voids(&ctx, &stored.rec, &mut after, &now).await?;
            let (money, guarded) = cancelled_funding(&ctx, &id, &now).await?;
            // The inner status change fires its own webhook first, then the method's, then one
            // updateDocuSignStatus per document voided.
            let events = [
                after.status_event(STATUS_METHOD),
                view_event(&method, &after.cancel_event()),
            ];
            let guarded = guarded && current == TradeStatus::Created;
            Ok(move_plan(client, &stored, after, voids, guarded, events)?.writes(money))
        })
        .await?;
    void_at_provider(&ctx, &after.id, &voids).await;
    Ok(Reply::ok().with(key, [after.cancelled_view()]))
}

/// What a cancellation does to the trade's ACH money (CONTRACT, "Refunds"): a `Pending` move
/// is voided with it (no status webhook, as requestForVoidACH); a `Submitted` one is with the
/// bank (`150`); `Settled` money is refunded by a credit move, `Pending` until the batch,
/// which holds the trade until it is through; a refund under way goes on. The writes, and
/// whether the trade operations' pending-ACH check still applies (not when the void clears
/// that marker itself).
async fn cancelled_funding(ctx: &Ctx, trade_id: &str, now: &str) -> Result<(Vec<Write>, bool), ApiError> {
    let client = ctx.client_id();
    let Some(held) = pay::holding_move(ctx.store(), client, trade_id).await? else {
        return Ok((Vec::new(), true));
    };
    if held.rec.is_refund() {
        return Ok((Vec::new(), true));
    }
    match held.rec.fund_status {
        FundStatus::Pending => {
            let voided = held.rec.moved(FundStatus::Voided, "", now);
            Ok((pay::move_change(client, &held, &voided)?, false))
        }
        FundStatus::Settled => Ok((refund(ctx, &held, trade_id, now).await?, true)),
        _ => Err(ach_pending()),
    }
}

/// The settled payment that holds a trade no longer funded: one whose refund came back
/// (returned or declined), the money still in escrow. A cancellation refunds it anew.
async fn settled_money(ctx: &Ctx, trade_id: &str, now: &str) -> Result<Vec<Write>, ApiError> {
    match pay::holding_move(ctx.store(), ctx.client_id(), trade_id).await? {
        Some(held) if !held.rec.is_refund() && held.rec.fund_status == FundStatus::Settled => {
            refund(ctx, &held, trade_id, now).await
        }
        _ => Ok(Vec::new()),
    }
}

/// The refund of `held`, a settled payment: a credit move to the investor's external account
/// for the next batch, which holds the trade while under way.
async fn refund(ctx: &Ctx, held: &Stored<FundMove>, trade_id: &str, now: &str) -> Result<Vec<Write>, ApiError> {
    let client = ctx.client_id();
    let to = pay::external(ctx.store(), client, Owner::Account, &held.rec.account_id).await?;
    let refund = held
        .rec
        .refund(ctx.next_id(FUND_MOVE).await?, to.as_ref().map(|e| &e.rec), now);
    let mut writes = pay::move_new(client, &refund)?;
    writes.push(pay::funding_hold(client, trade_id, &refund.ref_num, true));
    Ok(writes)
}

/// `POST /v3/cancelInvestment`: `tradeId`, `requestedBy`, `reason` required; `notes`,
/// `createdIpAddress` optional (stored with the cancellation). A `CREATED` or `FUNDED` trade
/// moves to `CANCELED` (`190` otherwise); its units go back to the offering. Its ACH money:
/// a `Pending` move is voided, a `Submitted` one answers `150`, settled money is refunded
/// (a credit move for the next batch). A `CANCELED` or `Rejected` trade whose refund came
/// back has that money refunded anew, its status unchanged (`190` for any other). Answers
/// `Canceled investment details` = `[cancelled-investment record]`; fires the inner
/// `updateTradeStatus`, then `cancelInvestment`. Its subscription documents still out are
/// voided in the same transaction (as updateTradeStatus to `CANCELED`).
pub async fn cancel_investment(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    cancel(ctx, p, "cancelInvestment", "Canceled investment details").await
}

/// `POST /v3/fundReturnRequest` (deprecated; use cancelInvestment): the same parameters and
/// behaviour, answered under `tradeDetails`; fires `updateTradeStatus`, then
/// `fundReturnRequest` with cancelInvestment's payload.
pub async fn fund_return_request(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    cancel(ctx, p, "fundReturnRequest", "tradeDetails").await
}

/// The status routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("updateTradeStatus", op!(update_status))
        .op("deleteTrade", op!(delete))
        .op("cancelInvestment", op!(cancel_investment))
        .op("fundReturnRequest", op!(fund_return_request))
}
