//! The operator's reviews: the same state changes the client methods make, firing the same
//! webhooks (`shared::reviews`).

use http::Method;
use serde::Deserialize;
use serde_json::{Map, Value};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::accreditation::StatusChange;
use shared::reviews::{
    change_ai_request, decide_kyc, kyc_request_by_id, numeric_id, KycDecision, AI_REVIEW_METHOD, KYC_REVIEW_METHOD,
};
use shared::{operator_op, Routes};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AiReview {
    status: String,
    notes: Option<String>,
    #[serde(rename = "reviewedBy")]
    reviewed_by: Option<String>,
}

/// The answer: `clientId`, then the record's fields.
fn with_client(client_id: &str, record: Map<String, Value>) -> OpReply {
    let mut out = Map::new();
    out.insert("clientId".into(), Value::from(client_id));
    out.extend(record);
    OpReply::ok(Value::Object(out))
}

/// `POST /operator/clients/{clientId}/ai-requests/{airequestId}/review`
/// `{"status", "notes", "reviewedBy"}`: the change updateAiVerification makes (`reviewedBy`
/// defaults to `operator`), firing its webhook. Answers the updateAiVerification record
/// with `clientId`.
async fn ai_review(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client_id = req.param("clientId");
    let ctx = octx.for_client(client_id, AI_REVIEW_METHOD).await?;
    let review: AiReview = req.body()?;
    if review.status.trim().is_empty() {
        return Err(OpError::BadRequest("status: required".into()));
    }
    let id = numeric_id("airequestId", req.param("airequestId"))?;
    let change = StatusChange {
        status: review.status,
        notes: review.notes,
        reviewed_by: Some(review.reviewed_by.unwrap_or_else(|| "operator".into())),
    };
    let (request, accredited) = change_ai_request(&ctx, &id, &change, AI_REVIEW_METHOD, true).await?;
    Ok(with_client(client_id, request.summary(&accredited, true)))
}

/// `POST /operator/clients/{clientId}/kyc-requests/{requestId}/review`
/// `{"kycStatus", "amlStatus", "notes"}` (at least one status): the decision
/// updateKycAmlStatus applies, on the request's investor, firing its webhook. Answers the
/// request record with `clientId`.
async fn kyc_review(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client_id = req.param("clientId");
    let ctx = octx.for_client(client_id, KYC_REVIEW_METHOD).await?;
    let decision: KycDecision = req.body()?;
    let request = kyc_request_by_id(&ctx, req.param("requestId")).await?;
    let after = decide_kyc(&ctx, &request.rec.id, &decision).await?;
    Ok(with_client(client_id, after.details()))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/ai-requests/{airequestId}/review",
            operator_op!(ai_review),
        )
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/kyc-requests/{requestId}/review",
            operator_op!(kyc_review),
        )
}
