//! The operator's ATS endpoints (CONTRACT, "The operator API"): order approval per issuer,
//! and the approval or rejection of a `Pending` order. (Market hours: `hours.rs`; the
//! expiry batch's run-now: `book.rs`.)

use http::Method;
use serde::Deserialize;
use serde_json::json;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::ats::{AtsOrder, OrderStatus};
use shared::model::ids::IssuerId;
use shared::records::ats as book;
use shared::records::issuer::live_issuer;
use shared::{operator_op, ApiError, Plan, Routes};

use crate::book::{order_event, place};
use crate::orders::expiry;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Required {
    required: bool,
}

/// `PUT /operator/clients/{clientId}/issuers/{issuerId}/order-approval`: `{"required"}`;
/// new orders for the issuer start `Pending` while it is required.
async fn order_approval(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: Required = req.body()?;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let issuer = IssuerId::parse(req.param("issuerId"))
        .map_err(|_| OpError::NotFound(format!("no issuer {}", req.param("issuerId"))))?;
    live_issuer(ctx.store(), ctx.client_id(), &issuer)
        .await
        .map_err(|_| OpError::NotFound(format!("no issuer {}", issuer.as_str())))?;
    let write = book::set_approval(ctx.client_id(), issuer.as_str(), body.required);
    ctx.transact(async move |_, _| Ok(Plan::new(vec![write.clone()], ())))
        .await?;
    Ok(OpReply::ok(json!({
        "clientId": ctx.client_id(),
        "issuerId": issuer.as_str(),
        "required": body.required,
    })))
}

/// `POST /operator/clients/{clientId}/orders/{orderId}/approve` and `.../reject`: a
/// `Pending` order becomes `Live` (and goes to its book) or `Not Approved` (409 otherwise);
/// webhook `updateOrder`. Answers the order as the order list shows it, with `clientId`.
async fn decide(octx: OperatorCtx, req: OperatorRequest, approve: bool) -> Result<OpReply, OpError> {
    req.no_body()?;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let id = req.param("orderId").to_owned();
    let unknown = format!("no order {id}");
    let after: AtsOrder = ctx
        .transact(async move |ctx, _| {
            let stored = book::order(ctx.store(), ctx.client_id(), &id)
                .await?
                .ok_or_else(|| ApiError::not_found(unknown.clone()))?;
            if stored.rec.order_status != OrderStatus::Pending {
                return Err(ApiError::conflict(format!(
                    "order {id} is {}, not Pending",
                    stored.rec.order_status.name()
                )));
            }
            let mut after = stored.rec.clone();
            after.updated_date = ctx.now();
            if approve {
                after.order_status = OrderStatus::Live;
                after.expires_at = expiry(&ctx, &after).await?;
            } else {
                after.order_status = OrderStatus::NotApproved;
            }
            let writes = book::change_order(ctx.client_id(), &stored, &after)?;
            Ok(Plan::new(writes, after.clone()).event(order_event(&after)))
        })
        .await?;
    place(&ctx, &after).await;
    Ok(OpReply::for_client(after.view(), ctx.client_id()))
}

async fn approve(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    decide(octx, req, true).await
}

async fn reject(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    decide(octx, req, false).await
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/issuers/{issuerId}/order-approval",
            operator_op!(order_approval),
        )
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/orders/{orderId}/approve",
            operator_op!(approve),
        )
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/orders/{orderId}/reject",
            operator_op!(reject),
        )
}
