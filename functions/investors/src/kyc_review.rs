//! The manual KYC/AML review (designed: part 2 names `POST /updateKycAmlStatus`, "manual
//! review only", and part 1 names updateKycAmlRequest; neither shape is shown):
//! updateKycAmlStatus decides the statuses of an investor with a manual request
//! (requestKycAml), updateKycAmlRequest moves that request's own status. The decision is
//! `shared::reviews::decide_kyc`, which the operator's review endpoint applies too. Shapes
//! and decisions: `docs/investors-kyc.md` (§Manual review).

use serde_json::Value;
use shared::records;
use shared::reviews::{self, KycDecision};
use shared::{op, Routes};
use shared::{ApiError, Ctx, Params, Plan, Reply};

use shared::webhooks::record_event;

/// The key both review operations answer with (requestKycAml's).
const DETAILS: &str = "requestDetails";

/// `POST /updateKycAmlStatus` (also `/v3/updateKycAmlStatus`): `partyId` (alias
/// `investorId`: a party, entity or account), `kycStatus` and/or `amlStatus` (at least one;
/// aliases `KYCstatus`, `AMLstatus`; stored as sent), `notes` optional. Allowed only for an
/// investor with a manual request (`106` otherwise). Sets the investor's statuses (an AML
/// decision also `amlDate`, a KYC decision on an account `kycDate`) and records the decision
/// on the request; `requestDetails` = [the request record], also the webhook's fields.
pub async fn update_kyc_aml_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["kycStatus", "KYCstatus", "amlStatus", "AMLstatus", "notes"])?;
    let investor = p.req(&["partyId", "investorId"])?;
    let decision = KycDecision {
        kyc_status: p.opt(&["kycStatus", "KYCstatus"])?,
        aml_status: p.opt(&["amlStatus", "AMLstatus"])?,
        notes: p.opt(&["notes"])?,
    };
    let request = reviews::decide_kyc(&ctx, investor.trim(), &decision).await?;
    Ok(Reply::ok().with_value(DETAILS, Value::Array(vec![Value::Object(request.details())])))
}

/// `POST /v3/updateKycAmlRequest`: `requestId` (numeric) and `requestStatus` (alias
/// `status`) required, `notes` optional: the manual request's status, stored as sent (no
/// fixed list; e.g. `Need More Info`, `New Info Added`). The investor's statuses stay.
/// Unknown `requestId`: `152`. `requestDetails` = [the request record], also the webhook's
/// fields.
pub async fn update_kyc_aml_request(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["requestStatus", "status", "notes"])?;
    let request_id = p.req(&["requestId"])?;
    let status = p.req(&["requestStatus", "status"])?;
    let notes = p.opt(&["notes"])?;
    let record = ctx
        .transact(async move |ctx, _| {
            let before = reviews::kyc_request_by_id(&ctx, &request_id).await?;
            let mut after = before.rec.clone();
            after.request_status = status.clone();
            if let Some(n) = &notes {
                after.notes = n.clone();
            }
            after.updated = ctx.now();
            let record = after.details();
            let event = record_event("updateKycAmlRequest", &record);
            Ok(Plan::new(records::replace(ctx.client_id(), &before, &after)?, record).event(event))
        })
        .await?;
    Ok(Reply::ok().with_value(DETAILS, Value::Array(vec![Value::Object(record)])))
}

/// The manual review routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("updateKycAmlStatus", op!(update_kyc_aml_status))
        .unprefixed("updateKycAmlStatus")
        .op("updateKycAmlRequest", op!(update_kyc_aml_request))
}
