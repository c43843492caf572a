//! The operator's offering endpoints (CONTRACT.md, "The operator API"): approving an
//! offering, linking an escrow account to it, and the client's custodian settings that
//! getCustodianDetailsforOffering answers.

use http::Method;
use serde::Deserialize;
use serde_json::{json, Value};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::custodian_settings::CustodianSettings;
use shared::model::offering::{status, EscrowAccount, Offering};
use shared::records::offering;
use shared::store::Write;
use shared::{operator_op, ApiError, Ctx, Plan, Routes};

use crate::clients::existing;

/// What the offering endpoints answer: a refusal they chose (`404`, `409`), else an
/// internal failure (they check their input first).
fn answer(e: ApiError) -> OpError {
    match e {
        ApiError::Resource { http: 404, desc, .. } => OpError::NotFound(desc),
        ApiError::Resource { http: 409, desc, .. } => OpError::Conflict(desc),
        ApiError::Internal(cause) => OpError::Internal(cause),
        other => OpError::internal_from("operator offering endpoint failed", other),
    }
}

/// Applies `change` to the live offering `id` of the context's client and writes it (with
/// `extra` writes), re-planned on a concurrent change of the offering; `None` from `change`
/// leaves it as it is.
async fn change_offering(
    ctx: &Ctx,
    id: &str,
    extra: Vec<Write>,
    change: impl Fn(&Offering) -> Result<Option<Offering>, ApiError> + Send + Sync + 'static,
) -> Result<Offering, OpError> {
    let unknown = ApiError::not_found(format!("no offering {id} of client {}", ctx.client_id()));
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(answer(unknown));
    }
    let id = id.to_owned();
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let stored = match offering::load(ctx.store(), client, &id).await? {
            Some(s) if !s.rec.deleted => s,
            _ => return Err(unknown.clone()),
        };
        let Some(after) = change(&stored.rec)? else {
            return Ok(Plan::answer(stored.rec));
        };
        let writes = offering::update(client, &stored, &after, Vec::new(), None)?;
        Ok(Plan::new(writes, after).writes(extra.iter().cloned()))
    })
    .await
    .map_err(answer)
}

/// `POST /operator/clients/{clientId}/offerings/{offeringId}/approve`: `offeringStatus`
/// becomes `Approved` (already approved: unchanged). A closed or cancelled offering is 409:
/// approval would let it accept investments again (a closed one is reopened first; a
/// cancelled one never is).
async fn approve(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    req.no_body()?;
    let (client, id) = (req.param("clientId"), req.param("offeringId"));
    existing(&octx, client).await?;
    let ctx = octx.for_client(client, "operator").await?;
    let now = ctx.now();
    let offering_id = id.to_owned();
    let o = change_offering(&ctx, id, Vec::new(), move |o| {
        if !o.accepts_investments() {
            // Only a closed offering that was never cancelled can be reopened (part 2).
            let then = if o.status == status::CLOSED && o.status_before_close != status::CANCELLED {
                "reopen it before approving"
            } else {
                "a cancelled offering is not approved again"
            };
            return Err(ApiError::conflict(format!(
                "offering {offering_id} is {}: {then}",
                o.status
            )));
        }
        if o.status == status::APPROVED {
            return Ok(None);
        }
        let mut after = o.clone();
        after.status = status::APPROVED.into();
        after.updated = now.clone();
        Ok(Some(after))
    })
    .await?;
    Ok(OpReply::ok(
        json!({"clientId": client, "offeringId": o.id, "offeringStatus": o.status}),
    ))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EscrowBody {
    escrow_account_number: String,
    #[serde(default)]
    escrow_bank: Option<String>,
    #[serde(default)]
    escrow_account_status: Option<String>,
    #[serde(default)]
    open_date: Option<String>,
    #[serde(default)]
    expiration_date: Option<String>,
    #[serde(default)]
    close_date: Option<String>,
}

fn escrow_date(name: &str, v: Option<String>) -> Result<Option<String>, OpError> {
    match v {
        None => Ok(None),
        Some(d) if d.is_empty() => Ok(None),
        Some(d) if chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").is_ok() && d.len() == 10 => Ok(Some(d)),
        Some(d) => Err(OpError::BadRequest(format!("{name}: {d} is not a YYYY-MM-DD date"))),
    }
}

/// `PUT /operator/clients/{clientId}/offerings/{offeringId}/escrow-account`: links an escrow
/// account (stored once per account number: several offerings may share one, and a later
/// link with the same number updates the account's details for all of them).
async fn link_escrow(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let (client, id) = (req.param("clientId"), req.param("offeringId"));
    let b: EscrowBody = req.body()?;
    let number = b.escrow_account_number.trim().to_owned();
    let number_ok = !number.is_empty()
        && number.len() <= 64
        && number
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !number_ok {
        return Err(OpError::BadRequest(
            "escrowAccountNumber: 1 to 64 letters, digits, '-' or '_'".into(),
        ));
    }
    let account_status = b.escrow_account_status.unwrap_or_else(|| "open".into());
    if account_status != "open" && account_status != "closed" {
        return Err(OpError::BadRequest("escrowAccountStatus: open or closed".into()));
    }
    let account = EscrowAccount {
        number: number.clone(),
        bank: b.escrow_bank.unwrap_or_default(),
        status: account_status,
        open_date: escrow_date("openDate", b.open_date)?,
        expiration_date: escrow_date("expirationDate", b.expiration_date)?,
        close_date: escrow_date("closeDate", b.close_date)?,
    };
    existing(&octx, client).await?;
    let ctx = octx.for_client(client, "operator").await?;
    let now = ctx.now();
    let writes = vec![
        offering::escrow_write(client, &account),
        shared::records::escrow::use_write(client, &number, id),
    ];
    let o = change_offering(&ctx, id, writes, move |o| {
        let mut after = o.clone();
        after.escrow_account_number = number.clone();
        after.updated = now.clone();
        Ok(Some(after))
    })
    .await?;
    let mut out = serde_json::to_value(&account).map_err(|e| OpError::internal_from("escrow account view", e))?;
    if let Value::Object(m) = &mut out {
        m.shift_insert(0, "offeringId".into(), Value::String(o.id.clone()));
        m.shift_insert(0, "clientId".into(), Value::String(client.to_owned()));
    }
    Ok(OpReply::ok(out))
}

/// `PUT /operator/clients/{clientId}/custodian-settings`: replaces the client's custodian
/// settings (`{"name", "additionaldescription", "wire": {...}, "check": {...}}`, every key
/// optional, values strings); answers the `custodianDetails` offerings will show.
async fn custodian_settings(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client = req.param("clientId");
    let settings = CustodianSettings::parse(&req.body).map_err(OpError::BadRequest)?;
    existing(&ctx, client).await?;
    ctx.store().write(vec![settings.write(client)]).await?;
    Ok(OpReply::ok(
        json!({"clientId": client, "custodianDetails": settings.details()}),
    ))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/offerings/{offeringId}/approve",
            operator_op!(approve),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/offerings/{offeringId}/escrow-account",
            operator_op!(link_escrow),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/custodian-settings",
            operator_op!(custodian_settings),
        )
}
