//! Trade edits that keep the status: editTrade, editTradeUnits, updateTrade,
//! updateTradeTransactionType, updateTradeArchivestatus and updateEligibleToCloseStatus.

use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::Value;
use shared::model::ids::{no_trade, numeric_id, AccountId};
use shared::model::offering::{six_decimals, Offering};
use shared::model::trade::{json_number, normalize_transaction_type, total_amount, wrong_status, Trade, TradeStatus};
use shared::model::validate;
use shared::records::offering;
use shared::records::trade;
use shared::records::Stored;
use shared::webhooks::view_event;
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{account_trade, existing_account, guard_ach, opt_date, trade_id, trade_of, units, yes_no};

/// The trade fields createTrade, updateTrade and updateTradeStatus may set, as parameters.
pub const FIELD_NAMES: &[&str] = &[
    "field1",
    "field2",
    "field3",
    "RRApprovalStatus",
    "RRName",
    "RRApprovalDate",
    "PrincipalApprovalStatus",
    "PrincipalName",
    "PrincipalDate",
    "closeId",
];

/// The optional trade fields a request sent (`None`: not sent, kept). Dates are checked
/// (`MM-DD-YYYY` or `YYYY-MM-DD`, `106` otherwise) and stored as sent.
pub struct TradeFields([Option<String>; 10]);

impl TradeFields {
    pub fn parse(p: &Params) -> Result<TradeFields, ApiError> {
        let mut out: [Option<String>; 10] = Default::default();
        for (slot, name) in out.iter_mut().zip(FIELD_NAMES) {
            *slot = if name.ends_with("Date") {
                opt_date(p, name)?
            } else {
                p.opt(&[name])?
            };
        }
        Ok(TradeFields(out))
    }

    /// Sets the fields sent; answers whether anything changed.
    pub fn apply(&self, t: &mut Trade) -> bool {
        let slots: [&mut String; 10] = [
            &mut t.field1,
            &mut t.field2,
            &mut t.field3,
            &mut t.rr_approval_status,
            &mut t.rr_name,
            &mut t.rr_approval_date,
            &mut t.principal_approval_status,
            &mut t.principal_name,
            &mut t.principal_date,
            &mut t.close_id,
        ];
        let mut changed = false;
        for (slot, value) in slots.into_iter().zip(&self.0) {
            if let Some(v) = value {
                if slot != v {
                    slot.clone_from(v);
                    changed = true;
                }
            }
        }
        changed
    }
}

/// The units check of an edit: `units` positive; more units than the trade holds need the
/// offering to accept investments and to have them left (`106` otherwise).
fn check_units(o: &Offering, t: &Trade, name: &str, units: i64) -> Result<i64, ApiError> {
    if units <= 0 {
        return Err(ApiError::invalid(name, "must be a positive whole number"));
    }
    let delta = units - t.units;
    if delta > 0 {
        o.require_accepting_investments()?;
    }
    if delta > o.remaining_shares {
        return Err(ApiError::invalid(
            name,
            format!(
                "{delta} more units requested, {} remain in the offering",
                o.remaining_shares
            ),
        ));
    }
    Ok(delta)
}

/// editTrade's `TradeFinancialDetails` and webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EditView<'a> {
    trade_id: &'a str,
    shares: String,
    share_price: Value,
    total_shares: String,
    remaining_shares: String,
    /// `None` (the webhook of a trade without one) is omitted from the webhook.
    close_id: Option<&'a str>,
}

impl<'a> EditView<'a> {
    /// The answer: `sharePrice` a number, `closeId` always.
    fn new(t: &'a Trade, total_shares: i64, remaining_shares: i64) -> Self {
        EditView {
            trade_id: &t.id,
            shares: t.units.to_string(),
            share_price: json_number(t.share_value()),
            total_shares: total_shares.to_string(),
            remaining_shares: remaining_shares.to_string(),
            close_id: Some(&t.close_id),
        }
    }
}

/// editTradeUnits' `TradeFinancialDetails` and webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EditUnitsView<'a> {
    trade_id: &'a str,
    share_price: Value,
    unit_price: String,
    total_shares: String,
}

impl<'a> EditUnitsView<'a> {
    /// The answer: `sharePrice` a number.
    fn new(t: &'a Trade) -> Self {
        EditUnitsView {
            trade_id: &t.id,
            share_price: json_number(t.share_value()),
            unit_price: six_decimals(t.unit_price),
            total_shares: t.units.to_string(),
        }
    }
}

fn stamp(ctx: &Ctx, t: &mut Trade) {
    t.stamps.change(ctx.now(), ctx.ip.to_string());
}

/// `PUT /v3/editTrade`: `accountId`, `offeringId`, `tradeId`, `shares` required; `closeId`
/// optional. A `CREATED` or `FUNDED` trade (`190` otherwise; a `CREATED` one with an ACH
/// fund move in flight `150`, as its amount was paid) gets `shares` units; the status does
/// not change. Its amount follows (unit price × shares + fees); the offering's
/// remaining shares move by the difference in the same transaction (more units need the
/// offering to accept investments and to have them: `106`). Answers `TradeFinancialDetails`
/// = `{tradeId, shares, sharePrice (the shares' value, a number), totalShares and
/// remainingShares (the offering's, after the edit), closeId}`; fires `editTrade`.
pub async fn edit(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["shares", "closeId"])?;
    let account = p.req(&["accountId"])?;
    let offering_id = numeric_id("offeringId", &p.req(&["offeringId"])?)?;
    let id = trade_id(&p)?;
    let shares = units(&p, "shares")?;
    let close_id = p.opt(&["closeId"])?;
    let account = AccountId::parse(&account)?;
    let (after, total, remaining) = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let a = existing_account(&ctx, &account).await?;
            let o = offering::live(ctx.store(), client, &offering_id).await?.rec;
            let stored = trade_of(&ctx, &id).await?;
            if stored.rec.account_id != a.rec.id || stored.rec.offering_id != o.id {
                return Err(no_trade());
            }
            let status = stored.rec.holding().status;
            if !matches!(status, TradeStatus::Created | TradeStatus::Funded) {
                return Err(wrong_status(format!(
                    "Trade status should be in CREATED or FUNDED (it is {})",
                    stored.rec.status
                )));
            }
            let delta = check_units(&o, &stored.rec, "shares", shares)?;
            let mut after = stored.rec.clone();
            after.units = shares;
            after.total_amount = total_amount(after.unit_price, shares, after.fees)
                .ok_or_else(|| ApiError::invalid("shares", "the amount is out of range"))?;
            if let Some(c) = &close_id {
                after.close_id.clone_from(c);
            }
            stamp(&ctx, &mut after);
            let remaining = o.remaining_shares - delta;
            let view = EditView {
                // The webhook's text; the answer's is a number.
                share_price: Value::from(six_decimals(after.share_value())),
                close_id: Some(after.close_id.as_str()).filter(|c| !c.is_empty()),
                ..EditView::new(&after, o.total_shares, remaining)
            };
            let event = view_event("editTrade", &view);
            let writes = trade::replace(client, &stored, &after)?;
            let plan = Plan::new(writes, (after, o.total_shares, remaining)).event(event);
            Ok(guard_ach(plan, client, &id, status == TradeStatus::Created))
        })
        .await?;
    Ok(Reply::ok().with("TradeFinancialDetails", EditView::new(&after, total, remaining)))
}

/// The offering of a trade, deleted ones included (`138` if it is gone entirely).
async fn offering_of(ctx: &Ctx, t: &Trade) -> Result<Offering, ApiError> {
    Ok(offering::load(ctx.store(), ctx.client_id(), &t.offering_id)
        .await?
        .ok_or_else(shared::model::ids::no_offering)?
        .rec)
}

/// `POST /v3/editTradeUnits`: `accountId`, `tradeId`, `unitPrice` (above zero), `totalShares`
/// required. Only in `CREATED` (`190` otherwise) with no ACH fund move in flight (`150`):
/// the trade's unit price and units change
/// (the status does not), its amount follows, and the offering's remaining shares move by
/// the difference in the same transaction (`106` as editTrade). Answers
/// `TradeFinancialDetails` = `{tradeId, sharePrice (unitPrice × totalShares, a number),
/// unitPrice, totalShares}`; fires `editTradeUnits`.
pub async fn edit_units(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["unitPrice", "totalShares"])?;
    let account = p.req(&["accountId"])?;
    let id = trade_id(&p)?;
    let unit_price = validate::amount("unitPrice", &p.req(&["unitPrice"])?)?;
    let total_shares = units(&p, "totalShares")?;
    if unit_price <= Decimal::ZERO {
        return Err(ApiError::invalid("unitPrice", "must be greater than zero"));
    }
    let account = AccountId::parse(&account)?;
    let after = ctx
        .transact(async move |ctx, _| {
            let stored = account_trade(&ctx, &account, &id).await?;
            if stored.rec.holding().status != TradeStatus::Created {
                return Err(wrong_status(format!(
                    "Trade status should be in CREATED (it is {})",
                    stored.rec.status
                )));
            }
            let o = offering_of(&ctx, &stored.rec).await?;
            check_units(&o, &stored.rec, "totalShares", total_shares)?;
            let mut after = stored.rec.clone();
            after.units = total_shares;
            after.unit_price = unit_price;
            after.total_amount = total_amount(unit_price, total_shares, after.fees)
                .ok_or_else(|| ApiError::invalid("totalShares", "the amount is out of range"))?;
            stamp(&ctx, &mut after);
            let view = EditUnitsView {
                // The webhook's text; the answer's is a number.
                share_price: Value::from(six_decimals(after.share_value())),
                ..EditUnitsView::new(&after)
            };
            let event = view_event("editTradeUnits", &view);
            let writes = trade::replace(ctx.client_id(), &stored, &after)?;
            Ok(guard_ach(Plan::new(writes, after), ctx.client_id(), &id, true).event(event))
        })
        .await?;
    Ok(Reply::ok().with("TradeFinancialDetails", EditUnitsView::new(&after)))
}

/// The trade `id`, of `account` when given (`148` / `188` as [`account_trade`]).
async fn load(ctx: &Ctx, account: Option<&AccountId>, id: &str) -> Result<Stored<Trade>, ApiError> {
    match account {
        Some(a) => account_trade(ctx, a, id).await,
        None => trade_of(ctx, id).await,
    }
}

/// Applies `change` to the trade `id` (of `account` when given) and commits it with what
/// `finish` adds to the plan (checks, webhooks), reading again after a concurrent change.
/// `change` answers the rule the trade breaks.
async fn simple_change(
    ctx: &Ctx,
    account: Option<AccountId>,
    id: String,
    change: impl Fn(&mut Trade) -> Result<(), ApiError> + Send,
    finish: impl Fn(Plan<Trade>, &Trade) -> Plan<Trade> + Send,
) -> Result<Trade, ApiError> {
    ctx.transact(async move |ctx, _| {
        let stored = load(&ctx, account.as_ref(), &id).await?;
        let mut after = stored.rec.clone();
        change(&mut after)?;
        stamp(&ctx, &mut after);
        let writes = trade::replace(ctx.client_id(), &stored, &after)?;
        Ok(finish(Plan::new(writes, after.clone()), &after))
    })
    .await
}

/// `POST /v3/updateTrade` (named only in part 1's webhook table; designed): `accountId` and
/// `tradeId` required; any of RR and principal fields, `field1`-`field3`, `closeId` (those
/// sent replace the stored ones, blank included; dates `MM-DD-YYYY`). Status, units and
/// amounts never change here. A deleted trade is `190`. Answers `tradeDetails` = `[trade
/// record]`; fires `updateTrade` (part 1's payload).
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELD_NAMES)?;
    let account = p.req(&["accountId"])?;
    let id = trade_id(&p)?;
    let fields = TradeFields::parse(&p)?;
    let account = AccountId::parse(&account)?;
    let after = simple_change(
        &ctx,
        Some(account),
        id,
        move |t| {
            if t.deleted {
                return Err(wrong_status("The trade was deleted"));
            }
            fields.apply(t);
            Ok(())
        },
        |plan, t| plan.event(t.update_event("updateTrade")),
    )
    .await?;
    Ok(Reply::ok().with("tradeDetails", [after.details()]))
}

/// `POST /v3/updateTradeTransactionType`: `tradeId`, `transactionType` required (stored as
/// createTrade stores it). Only while the trade is `CREATED` (`190`) and no ACH fund move is
/// pending (`150`): the payment method is chosen before funds move. Answers `TradeDetails`
/// = `[record]` (OBSERVED-MORE.md); fires `updateTradeTransactionType` (`tradeId`,
/// `transactionType`).
pub async fn update_transaction_type(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["transactionType"])?;
    let id = trade_id(&p)?;
    let tt = normalize_transaction_type(&p.req(&["transactionType"])?);
    if tt.is_empty() {
        return Err(ApiError::missing("transactionType"));
    }
    let client = ctx.client_id().to_owned();
    let after = simple_change(
        &ctx,
        None,
        id,
        move |t| {
            if t.holding().status != TradeStatus::Created {
                return Err(wrong_status(format!(
                    "Trade status should be in CREATED (it is {})",
                    t.status
                )));
            }
            t.transaction_type.clone_from(&tt);
            Ok(())
        },
        move |plan, t| {
            let event = view_event("updateTradeTransactionType", &t.transaction_type_event());
            guard_ach(plan, &client, &t.id, true).event(event)
        },
    )
    .await?;
    Ok(Reply::ok().with("TradeDetails", [after.transaction_type_view()]))
}

/// `POST /v3/updateTradeArchivestatus`: `tradeId` and `archiveStatus` (`1`/`true` archives,
/// `0`/`false` unarchives) required. Archiving is a flag (`archived_status` in the reads):
/// the trade keeps its status and can still change. Answers `tradeDetails` = `[{tradeId,
/// partyId, offeringId, orderStatus, archiveStatus}]` and fires the same fields.
pub async fn update_archive_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let archived = p.archive_status()?;
    let after = simple_change(
        &ctx,
        None,
        id,
        move |t| {
            t.archived = archived;
            Ok(())
        },
        |plan, t| plan.event(view_event("updateTradeArchivestatus", &t.archive_view())),
    )
    .await?;
    Ok(Reply::ok().with("tradeDetails", [after.archive_view()]))
}

/// `POST /v3/updateEligibleToCloseStatus` (named only in part 1; designed): `tradeId` and
/// `eligibleToClose` (`yes`/`no`; `1`/`0` and `true`/`false` accepted) required. A trade in a
/// terminal status (`CANCELED`, `Rejected`, `UNWIND SETTLED`) cannot be made eligible
/// (`190`). Answers `tradeDetails` = `[{tradeId, accountId, offeringId, orderStatus,
/// eligibleToClose}]` and fires the same fields.
pub async fn update_eligible_to_close(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let eligible = yes_no(&p, "eligibleToClose")?.to_owned();
    let after = simple_change(
        &ctx,
        None,
        id,
        move |t| {
            if eligible == "yes" && t.holding().status.is_terminal() {
                return Err(wrong_status(format!(
                    "A trade in status {} cannot be eligible to close",
                    t.status
                )));
            }
            t.eligible_to_close.clone_from(&eligible);
            Ok(())
        },
        |plan, t| plan.event(view_event("updateEligibleToCloseStatus", &t.eligible_view())),
    )
    .await?;
    Ok(Reply::ok().with("tradeDetails", [after.eligible_view()]))
}

/// The edit routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("editTrade", op!(edit))
        .op("editTradeUnits", op!(edit_units))
        .op("updateTrade", op!(update))
        .op("updateTradeTransactionType", op!(update_transaction_type))
        .op("updateTradeArchivestatus", op!(update_archive_status))
        .op("updateEligibleToCloseStatus", op!(update_eligible_to_close))
}
