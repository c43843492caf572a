//! Reconciliation with the sandbox escrow bank (CONTRACT, "Reconciliation"): at 9:00 AM and
//! 3:00 PM Eastern each business day, or the operator's `batches/escrow/run`, each escrow
//! account's ledger is compared with the bank (the sandbox bank agrees with the ledger) and
//! `reconciledAt` recorded with the figures; while the operator marks the bank unavailable,
//! nothing changes.

use std::sync::Arc;

use http::Method;
use serde::Deserialize;
use serde_json::json;
use shared::batches::{Batch, Due};
use shared::calendar::EASTERN;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::escrow::{figures, Reconciliation};
use shared::records::{escrow as rec, payments as pay};
use shared::{batch_due, batch_process, operator_op, ApiError, Ctx, Plan, Ports, Routes};

/// The reconciliation: 09:00 and 15:00 America/New_York on business days.
pub const ESCROW_BATCH: Batch = Batch {
    name: "escrow",
    zone: EASTERN,
    hours: &[9, 15],
    every_day: false,
    due: batch_due!(due),
    process: batch_process!(reconcile),
};

/// Every escrow account, or none while the bank is unavailable.
async fn due(ports: Arc<Ports>) -> Result<Vec<Due>, ApiError> {
    if !rec::bank_available(ports.store.as_ref()).await? {
        return Ok(Vec::new());
    }
    Ok(rec::all_accounts(ports.store.as_ref())
        .await?
        .into_iter()
        .map(|(client_id, id)| Due { client_id, id })
        .collect())
}

/// Reconciles account `number` of the context's client: the ledger's figures with the time.
async fn reconcile(ctx: Ctx, number: String) -> Result<bool, ApiError> {
    if !rec::bank_available(ctx.store()).await? {
        return Ok(false);
    }
    let ledger = pay::ledger(ctx.store(), ctx.client_id(), &number).await?;
    let (available, total) = figures(&ledger);
    let record = Reconciliation {
        reconciled_at: ctx.now(),
        available_balance_cents: available,
        total_balance_cents: total,
    };
    let write = rec::reconciliation_write(ctx.client_id(), &number, &record)?;
    ctx.transact(async move |_, _| Ok(Plan::new(vec![write.clone()], true)))
        .await
}

/// `POST /operator/batches/escrow/run`: the reconciliation now.
async fn run(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    ESCROW_BATCH.run_for_operator(&octx, &req).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BankBody {
    available: bool,
}

/// `PUT /operator/escrow-bank`: `{"available": true | false}`; while false, balances answer
/// 502 and the reconciliation changes nothing.
async fn bank(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: BankBody = req.body()?;
    octx.store()
        .write(vec![rec::bank_write(body.available)])
        .await
        .map_err(|e| OpError::internal_from("escrow bank state not written", e))?;
    Ok(OpReply::ok(json!({"available": body.available})))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(Method::POST, "/operator/batches/escrow/run", operator_op!(run))
        .operator(Method::PUT, "/operator/escrow-bank", operator_op!(bank))
}
