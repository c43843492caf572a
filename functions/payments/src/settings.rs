//! The operator's payment endpoints (CONTRACT, "The operator API"): a client's payment
//! settings (providers, maximum single ACH, card limit, custody risk limit) and the
//! per-account ACH block.

use http::Method;
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::payments::{money, PaymentSettings};
use shared::model::Account;
use shared::records::payments as pay;
use shared::{operator_op, Plan, Routes};

fn view(client: &str, s: &PaymentSettings) -> Value {
    json!({
        "clientId": client,
        "achProvider": s.ach_provider,
        "cardProvider": s.card_provider,
        "maxSingleAch": money(s.max_single_ach),
        "cardLimit": money(s.card_limit),
        "custodyRiskLimit": money(s.custody_risk_limit),
    })
}

/// A provider: `"sandbox"`, or null for none (then `211`).
fn provider(name: &str, v: &Value) -> Result<Option<String>, OpError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) if s == "sandbox" => Ok(Some(s.clone())),
        _ => Err(OpError::BadRequest(format!("{name}: \"sandbox\" or null"))),
    }
}

/// A limit: a positive decimal string (or number) with at most two places.
fn limit(name: &str, v: &Value) -> Result<Decimal, OpError> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    shared::model::payments::fund_amount(&text)
        .map_err(|_| OpError::BadRequest(format!("{name}: a positive amount with at most two decimal places")))
}

/// The settings with the body's keys applied (omitted keys unchanged, unknown keys `400`).
fn apply(mut s: PaymentSettings, body: &Map<String, Value>) -> Result<PaymentSettings, OpError> {
    for (k, v) in body {
        match k.as_str() {
            "achProvider" => s.ach_provider = provider(k, v)?,
            "cardProvider" => s.card_provider = provider(k, v)?,
            "maxSingleAch" => s.max_single_ach = limit(k, v)?,
            "cardLimit" => s.card_limit = limit(k, v)?,
            "custodyRiskLimit" => s.custody_risk_limit = limit(k, v)?,
            other => return Err(OpError::BadRequest(format!("unknown key {other}"))),
        }
    }
    Ok(s)
}

/// `GET /operator/clients/{clientId}/payment-settings`: the settings in force.
async fn get(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let (s, _) = pay::settings(ctx.store(), ctx.client_id()).await?;
    Ok(OpReply::ok(view(ctx.client_id(), &s)))
}

/// `PUT /operator/clients/{clientId}/payment-settings`: `{"achProvider", "cardProvider",
/// "maxSingleAch", "cardLimit", "custodyRiskLimit"}`, omitted keys unchanged; answers the
/// settings in force from the client's next request.
async fn put(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body = &req.body;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    apply(PaymentSettings::default(), body)?;
    let body = body.clone();
    let after = ctx
        .transact(async move |ctx, _| {
            let (before, version) = pay::settings(ctx.store(), ctx.client_id()).await?;
            let after = apply(before, &body).map_err(|e| shared::ApiError::invalid("body", e.to_string()))?;
            let write = pay::settings_put(ctx.client_id(), &after, version)?;
            Ok(Plan::new(vec![write], after))
        })
        .await?;
    Ok(OpReply::ok(view(ctx.client_id(), &after)))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AchBlock {
    blocked: bool,
}

/// `PUT /operator/clients/{clientId}/accounts/{accountId}/ach`: `{"blocked": true or
/// false}`; a blocked account's fund moves answer `773`. `404` for an unknown account.
async fn block(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let AchBlock { blocked } = req.body()?;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let account = req.param("accountId");
    let unknown = || OpError::NotFound(format!("no account {account} of client {}", ctx.client_id()));
    match shared::records::load::<Account>(ctx.store(), ctx.client_id(), account).await? {
        Some(a) if !a.rec.deleted => {}
        _ => return Err(unknown()),
    }
    ctx.store()
        .write(vec![pay::ach_block_write(ctx.client_id(), account, blocked)])
        .await
        .map_err(|e| OpError::internal_from("ACH block not written", e))?;
    Ok(OpReply::ok(
        json!({"clientId": ctx.client_id(), "accountId": account, "blocked": blocked}),
    ))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(
            Method::GET,
            "/operator/clients/{clientId}/payment-settings",
            operator_op!(get),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/payment-settings",
            operator_op!(put),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/accounts/{accountId}/ach",
            operator_op!(block),
        )
}
