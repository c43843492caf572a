//! The 6:00 PM Eastern ACH batch (part 3's state table): every `Pending` move is submitted
//! to the bank, `updateExternalFundMoveStatus` firing for each; and the operator's side of
//! the bank: run the batch now, and settle, return or decline a `Submitted` move.

use std::sync::Arc;

use http::Method;
use serde::Deserialize;
use shared::batches::{Batch, Due};
use shared::calendar::EASTERN;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::payments::{FundMove, FundStatus, Owner};
use shared::records::payments as pay;
use shared::records::trade;
use shared::{batch_due, batch_process, operator_op, ApiError, Ctx, Plan, Ports, Routes};

use crate::ach::{move_writes, trade_writes, void_if_offering_ended};

/// The ACH batch: 18:00 America/New_York on business days.
pub const ACH: Batch = Batch {
    name: "ach",
    zone: EASTERN,
    hours: &[18],
    every_day: false,
    due: batch_due!(ach_due),
    process: batch_process!(submit),
};

/// Every client's `Pending` moves due under `index` ([`pay::ACH_DUE`], [`pay::CARD_DUE`]).
pub(crate) async fn due_in(ports: Arc<Ports>, index: &str) -> Result<Vec<Due>, ApiError> {
    let moves = pay::due_moves(ports.store.as_ref(), index).await?;
    Ok(moves
        .into_iter()
        .map(|(client_id, m)| Due {
            client_id,
            id: m.ref_num,
        })
        .collect())
}

async fn ach_due(ports: Arc<Ports>) -> Result<Vec<Due>, ApiError> {
    due_in(ports, pay::ACH_DUE).await
}

/// Submits move `ref_num` if it is still `Pending` (else nothing: a second delivery, or a
/// void that came first); a debit into an offering that stopped taking investments since is
/// voided instead. A concurrent void and submission cannot both win: each writes
/// over the version it read.
async fn submit(ctx: Ctx, ref_num: String) -> Result<bool, ApiError> {
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let stored = match pay::fund_move(ctx.store(), client, &ref_num).await? {
            Some(m) if m.rec.fund_status == FundStatus::Pending => m,
            _ => return Ok(Plan::answer(false)),
        };
        if let Some(voided) = void_if_offering_ended(&ctx, &stored).await? {
            let (writes, _) = move_writes(client, &stored, &voided, true)?;
            return Ok(Plan::new(writes, true));
        }
        let mut after = stored.rec.moved(FundStatus::Submitted, "", &ctx.now());
        if after.is_refund() {
            // A refund goes to the account on file now; without one it waits (CONTRACT), and
            // says so (the account it was meant for may have been deleted since).
            let to = pay::external(ctx.store(), client, Owner::Account, &after.account_id).await?;
            after.pay_to(to.as_ref().map(|e| &e.rec));
            if to.is_none() {
                let mut waiting = stored.rec.clone();
                waiting.pay_to(None);
                if waiting == stored.rec {
                    return Ok(Plan::answer(false));
                }
                waiting.updated_date = ctx.now();
                return Ok(Plan::new(pay::move_change(client, &stored, &waiting)?, false));
            }
        }
        let (writes, events) = move_writes(client, &stored, &after, false)?;
        Ok(Plan::new(writes, true).events(events))
    })
    .await
}

/// `POST /operator/batches/ach/run`: runs the batch now, on any day and at any hour:
/// `{"batch": "ach", "processed": N}`.
async fn run(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    ACH.run_for_operator(&octx, &req).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusBody {
    status: String,
    #[serde(default)]
    error: Option<String>,
}

/// What the bank says of a `Submitted` move: `Settled` (the trade `FUNDED`), `Returned` or
/// `Declined` (the trade free to be funded again).
fn bank_outcome(status: &str) -> Result<FundStatus, OpError> {
    match status {
        "Settled" => Ok(FundStatus::Settled),
        "Returned" => Ok(FundStatus::Returned),
        "Declined" => Ok(FundStatus::Declined),
        _ => Err(OpError::BadRequest("status: Settled, Returned or Declined".into())),
    }
}

fn conflict(m: &FundMove) -> ApiError {
    ApiError::conflict(format!(
        "fund move {} is {}, not Submitted",
        m.ref_num,
        m.fund_status.name()
    ))
}

/// `POST /operator/clients/{clientId}/accounts/{accountId}/fund-moves/{RefNum}/status`:
/// `{"status": "Settled" | "Returned" | "Declined", "error"}` on a `Submitted` move (409
/// otherwise, 404 for an unknown client, account or move): the move, its markers and its
/// trade change in one transaction, firing `updateExternalFundMoveStatus`. Answers the move
/// as getExternalFundMove shows it, with `clientId`.
async fn bank_status(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: StatusBody = req.body()?;
    let outcome = bank_outcome(&body.status)?;
    let error = body.error.unwrap_or_default();
    let (account, ref_num) = (req.param("accountId").to_owned(), req.param("RefNum").to_owned());
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let unknown = format!("no fund move {ref_num} of account {account}");
    let after = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let stored = match pay::fund_move(ctx.store(), client, &ref_num).await? {
                Some(m) if m.rec.account_id == account => m,
                _ => return Err(ApiError::not_found(unknown.clone())),
            };
            if stored.rec.fund_status != FundStatus::Submitted {
                return Err(conflict(&stored.rec));
            }
            let after = stored.rec.moved(outcome, &error, &ctx.now());
            let (mut writes, events) = move_writes(client, &stored, &after, false)?;
            if !after.is_custody() {
                let trade = trade::existing(ctx.store(), client, &after.trade_id).await?;
                writes.extend(trade_writes(client, &after, &trade, &after.updated_date)?);
            }
            Ok(Plan::new(writes, after).events(events))
        })
        .await?;
    Ok(OpReply::for_client(after.view(), ctx.client_id()))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(Method::POST, "/operator/batches/ach/run", operator_op!(run))
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/accounts/{accountId}/fund-moves/{RefNum}/status",
            operator_op!(bank_status),
        )
}
