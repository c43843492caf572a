//! Accreditation verification: requestAiVerification, updateAiRequest, updateAiVerification
//! and getAiRequest. The status rules are `shared::model::accreditation`; the status change
//! (shared with the operator's review) is `shared::reviews`. Shapes and decisions:
//! `docs/investors-accreditation.md`.

use serde::Serialize;
use shared::ids::AI_REQUEST;
use shared::model::accreditation::{AiRequest, Details, StatusChange, PENDING};
use shared::model::ai_documents::AiDocumentView;
use shared::records;
use shared::reviews::{self, AI_REVIEW_METHOD};
use shared::{op, Routes};
use shared::{ApiError, Ctx, Params, Plan, Reply};

use crate::accounts::{existing_account, live_account};
use shared::billing::billing;

/// The key every accreditation response uses.
const DETAILS: &str = "accreditedDetails";

/// `POST /v3/requestAiVerification` (billed): a new request for a live account
/// (`accountId` required; `aiMethod`, `notes` and `allow` stored as sent), status `Pending`;
/// `accreditedDetails` = [{`accountId`, `aiRequestStatus`, `airequestId`, `notes`,
/// `accreditedStatus`}], the account's status as stored. The account is not changed.
pub async fn request_ai_verification(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["aiMethod", "notes", "allow"])?;
    let account_id = p.req(&["accountId"])?;
    let ai_method = p.text(&["aiMethod"])?;
    let notes = p.text(&["notes"])?;
    let allow = p.text(&["allow"])?;
    let mut reserved: Option<String> = None;
    let (request, accredited) = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let account = live_account(&ctx, &account_id).await?;
            // Allocated once the account is known (a 148 burns no ID), kept across re-plans.
            let id = match &reserved {
                Some(id) => id.clone(),
                None => reserved.insert(ctx.next_id(AI_REQUEST).await?).clone(),
            };
            let now = ctx.now();
            let request = AiRequest {
                id: id.clone(),
                account_id: account.rec.id.clone(),
                ai_method: ai_method.clone(),
                allow: allow.clone(),
                notes: notes.clone(),
                status: PENDING.to_owned(),
                created: now.clone(),
                updated: now,
                ..AiRequest::default()
            };
            let mut writes = records::insert(client, &request)?;
            writes.push(records::accreditation::account_entry(client, &request));
            // The account is read for its status and must not change meanwhile (deleted,
            // archived): the request is made against the account as read.
            writes.push(records::unchanged(client, &account));
            writes.extend(billing(&ctx, "requestAiVerification", &account_id, &id)?);
            let accredited = account.rec.accredited_status;
            let event = request.event("requestAiVerification", &accredited, true);
            Ok(Plan::new(writes, (request, accredited)).event(event))
        })
        .await?;
    Ok(Reply::ok().with(DETAILS, [request.summary_view(&accredited, true)]))
}

/// The request ID and status every status change takes (both required; the ID numeric).
fn status_params(p: &Params) -> Result<(String, String), ApiError> {
    let id = p.req(&["airequestId"])?;
    let status = p.req(&["aiRequestStatus"])?;
    Ok((reviews::numeric_id("airequestId", &id)?, status))
}

/// `POST /v3/updateAiRequest`: the investor's side (`airequestId`, `aiRequestStatus`, both
/// required). `Approved` makes the account `Verified Accredited`, `rejected` `Not
/// Accredited` (any casing); any other value is only stored. `accreditedDetails` =
/// [{`accountId`, `aiRequestStatus`, `airequestId`, `accreditedStatus`}].
pub async fn update_ai_request(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["aiRequestStatus"])?;
    let (id, status) = status_params(&p)?;
    let change = StatusChange {
        status,
        ..StatusChange::default()
    };
    let (request, accredited) = reviews::change_ai_request(&ctx, &id, &change, "updateAiRequest", false).await?;
    Ok(Reply::ok().with(DETAILS, [request.summary_view(&accredited, false)]))
}

/// `POST /v3/updateAiVerification` (designed: named only in part 1's webhook table): the
/// reviewer's status change (`airequestId`, `aiRequestStatus` required; `notes` replaces
/// the stored notes when sent, `reviewedBy` records the reviewer). Same status rules as
/// updateAiRequest; `accreditedDetails` = [{`accountId`, `aiRequestStatus`, `airequestId`,
/// `notes`, `accreditedStatus`}], the fields of its webhook.
pub async fn update_ai_verification(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["aiRequestStatus", "notes", "reviewedBy"])?;
    let (id, status) = status_params(&p)?;
    let change = StatusChange {
        status,
        notes: p.opt(&["notes"])?,
        reviewed_by: p.opt(&["reviewedBy"])?,
    };
    let (request, accredited) = reviews::change_ai_request(&ctx, &id, &change, AI_REVIEW_METHOD, true).await?;
    Ok(Reply::ok().with(DETAILS, [request.summary_view(&accredited, true)]))
}

/// `POST /v3/getAiRequest`: `accountId` (an archived account is read too);
/// `accreditedDetails` = {`request`: the account's requests, newest first, each the record of
/// part 2's Accreditation request, and when the account has verification documents
/// `documents`: their review status and a signed `documentUrl`}. An account without requests
/// answers an empty `request`.
pub async fn get_ai_request(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account_id = p.req(&["accountId"])?;
    let account = existing_account(&ctx, &account_id).await?.rec;
    let mut requests = Vec::new();
    let q = records::accreditation::account_entries(ctx.client_id(), &account.id);
    for item in &records::query_all(ctx.store(), q).await? {
        let Some(id) = records::accreditation::entry_request_id(item) else {
            continue;
        };
        if let Some(r) = records::load::<AiRequest>(ctx.store(), ctx.client_id(), id).await? {
            if !r.rec.deleted {
                requests.push(r.rec);
            }
        }
    }
    let details = AiRequests {
        request: requests.iter().map(|r| r.details(&account)).collect(),
        documents: records::ai_documents::ai_documents_view(&ctx, &account.id).await?,
    };
    Ok(Reply::ok().with(DETAILS, details))
}

/// getAiRequest's answer: the account's requests, and its verification documents when it
/// has any.
#[derive(Serialize)]
struct AiRequests<'a> {
    request: Vec<Details<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    documents: Vec<AiDocumentView>,
}

/// The accreditation routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("requestAiVerification", op!(request_ai_verification))
        .op("updateAiRequest", op!(update_ai_request))
        .op("updateAiVerification", op!(update_ai_verification))
        .op("getAiRequest", op!(get_ai_request))
}
