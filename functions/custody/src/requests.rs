//! Custody account requests (part 3's `custAccStatus` table): createCustodyAccountRequest
//! and its alias requestCustodialAccount; updateCustodyAccountRequest and its three other
//! names; the operator's review, which applies at once; and the daily processing at 08:00
//! America/Denver, the sandbox custodian's own review (CONTRACT). Every status change is
//! delivered under all four update names, in the change's commit.

use std::sync::Arc;

use http::Method;
use serde::Deserialize;
use shared::batches::{Batch, Due};
use shared::calendar::MOUNTAIN;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::custody::{
    attestation_error, no_request, request_exists, Attestation, CustodyRequest, RequestStatus, CUSTODY_REQUEST,
    UPDATE_METHODS,
};
use shared::model::ids::numeric_id;
use shared::model::Party;
use shared::records::custody as rec;
use shared::records::{self, link};
use shared::webhooks::{view_event, Event};
use shared::{batch_due, batch_process, op, operator_op, ApiError, Ctx, Params, Plan, Ports, Reply, Routes};

/// The webhooks of a status change: one per update name (part 1's custody registration note).
fn status_events(r: &CustodyRequest) -> Vec<Event> {
    UPDATE_METHODS.iter().map(|m| view_event(m, &r.event_view())).collect()
}

/// `POST /v3/createCustodyAccountRequest` (and `requestCustodialAccount`): `accountId`.
/// The account exists and is active (`148`), then a custody agreement is on file (`1422`),
/// then the account has no request yet (`227`; of concurrent calls exactly one creates it).
/// Answers `custodialAccountDetails` = `[{accountId, custAccStatus: Pending, accountStatus:
/// Pending, custAccRequestID, createdDate, approvalStatus}]`; fires
/// `createCustodyAccountRequest` (and `requestCustodialAccount` when called by that name).
async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = records::active_account(&ctx, &p.req(&["accountId"])?).await?.rec;
    let on_file = records::owned::<Attestation>(ctx.store(), ctx.client_id(), &account.id)
        .await?
        .is_some_and(|a| a.rec.on_file());
    if !on_file {
        return Err(attestation_error(
            "No custody agreement attestation on file for this account",
        ));
    }
    if rec::request_of_account(ctx.store(), ctx.client_id(), &account.id)
        .await?
        .is_some()
    {
        return Err(request_exists());
    }
    let request_id = ctx.next_id(CUSTODY_REQUEST).await?;
    let now = ctx.now();
    let request = CustodyRequest {
        request_id,
        account_id: account.id.clone(),
        status: RequestStatus::Pending,
        approval_status: account.approval_status.clone(),
        notes: String::new(),
        approval_date: String::new(),
        created_date: now.clone(),
        updated_date: now,
        updated_ip: ctx.ip.to_string(),
    };
    let (put, id) = rec::request_new(ctx.client_id(), &request)?;
    let mut events = vec![view_event("createCustodyAccountRequest", &request.event_view())];
    if &*ctx.operation == "requestCustodialAccount" {
        events.push(view_event("requestCustodialAccount", &request.event_view()));
    }
    let request = ctx
        .transact(async move |_, _| {
            Ok(Plan::new(vec![id.clone()], request.clone())
                .check(put.clone(), request_exists())
                .events(events.clone()))
        })
        .await?;
    Ok(Reply::ok().with("custodialAccountDetails", [request.created_view()]))
}

/// The caller's active account `raw` with an approved custody account (`148` otherwise):
/// what custody fund moves and disbursements act for.
pub(crate) async fn open_custody_account(ctx: &Ctx, raw: &str) -> Result<String, ApiError> {
    let account = records::active_account(ctx, raw).await?.rec.id;
    let open = rec::request_of_account(ctx.store(), ctx.client_id(), &account)
        .await?
        .is_some_and(|r| r.rec.status == RequestStatus::Approved);
    if !open {
        return Err(ApiError::coded("148", "Account has no approved custody account."));
    }
    Ok(account)
}

/// The request a call names by `custAccRequestID` (`228` when unknown or not numeric).
async fn named(ctx: &Ctx, raw: &str) -> Result<shared::records::Stored<CustodyRequest>, ApiError> {
    let id = numeric_id("custAccRequestID", raw).map_err(|_| no_request())?;
    rec::request(ctx.store(), ctx.client_id(), &id)
        .await?
        .ok_or_else(no_request)
}

/// `POST /v3/updateCustodyAccountRequest` (and updateCustodialAccountRequest,
/// approveCustodyAccountRequest, approveCustodialAccountRequest): `custAccRequestID` and
/// `custAccRequestStatus` required; `notes`, `updatedIpAddress` optional. A client sets
/// `Pending` (from any status) or `New Info Added` (from `Need More Info`); anything else is
/// `106`, an unknown request `228`. Answers `custodialAccountDetails` = `[{accountId,
/// custAccStatus, accountStatus, custAccRequestID, createdDate}]`; fires the four update
/// names.
async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["custAccRequestStatus", "notes", "updatedIpAddress"])?;
    let raw_id = p.req(&["custAccRequestID"])?;
    let raw_status = p.req(&["custAccRequestStatus"])?;
    let status = RequestStatus::parse(&raw_status)
        .filter(|s| matches!(s, RequestStatus::Pending | RequestStatus::NewInfoAdded))
        .ok_or_else(|| ApiError::invalid("custAccRequestStatus", "Pending or New Info Added"))?;
    let notes = p.opt(&["notes"])?;
    let ip = p.opt(&["updatedIpAddress"])?.filter(|v| !v.trim().is_empty());
    let account = named(&ctx, &raw_id).await?.rec.account_id;
    // Part 3: `148` for an account missing or inactive.
    records::active_account(&ctx, &account).await?;
    let after = ctx
        .transact(async move |ctx, _| {
            let stored = rec::request_of_account(ctx.store(), ctx.client_id(), &account)
                .await?
                .ok_or_else(no_request)?;
            if status == RequestStatus::NewInfoAdded && stored.rec.status != RequestStatus::NeedMoreInfo {
                return Err(ApiError::invalid(
                    "custAccRequestStatus",
                    format!(
                        "New Info Added follows Need More Info; the request is {}",
                        stored.rec.status.name()
                    ),
                ));
            }
            let ip = ip.clone().unwrap_or_else(|| ctx.ip.to_string());
            let after = stored.rec.moved(status, notes.as_deref(), Some(&ip), &ctx.now());
            let write = rec::request_put(ctx.client_id(), &after, Some(stored.version))?;
            // Every successful call fires (part 1; part 3's table: Pending from any status,
            // with its webhook), the current status set again included.
            let events = status_events(&after);
            Ok(Plan::new(vec![write], after).events(events))
        })
        .await?;
    Ok(Reply::ok().with("custodialAccountDetails", [after.view()]))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewBody {
    status: String,
    #[serde(default)]
    notes: Option<String>,
}

/// `POST /operator/clients/{clientId}/custody-requests/{custAccRequestID}/review`:
/// `{"status": "Approved" | "Rejected" | "Need More Info", "notes"}` on a request awaiting
/// review (`Pending` or `New Info Added`; 409 otherwise, 404 when unknown). Applies at once
/// and fires the four update names; `Approved` opens the custody account. Answers the
/// request as updateCustodyAccountRequest shows it, with `clientId`.
async fn review(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: ReviewBody = req.body()?;
    let status = RequestStatus::parse(&body.status)
        .filter(|s| {
            matches!(
                s,
                RequestStatus::Approved | RequestStatus::Rejected | RequestStatus::NeedMoreInfo
            )
        })
        .ok_or_else(|| OpError::BadRequest("status: Approved, Rejected or Need More Info".into()))?;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let raw_id = req.param("custAccRequestID").to_owned();
    let unknown = format!("no custody request {raw_id}");
    let account = match named(&ctx, &raw_id).await {
        Ok(r) => r.rec.account_id,
        Err(e) if e.code() == "228" => return Err(OpError::NotFound(unknown)),
        Err(e) => return Err(e.into()),
    };
    let after = ctx
        .transact(async move |ctx, _| {
            let stored = rec::request_of_account(ctx.store(), ctx.client_id(), &account)
                .await?
                .ok_or_else(|| ApiError::not_found(unknown.clone()))?;
            if !stored.rec.status.awaits_review() {
                return Err(ApiError::conflict(format!(
                    "custody request {} is {}, not awaiting review",
                    stored.rec.request_id,
                    stored.rec.status.name()
                )));
            }
            if !account_active(&ctx, &account).await? {
                return Err(ApiError::conflict(format!("account {account} is deleted or archived")));
            }
            let after = stored.rec.moved(status, body.notes.as_deref(), None, &ctx.now());
            let write = rec::request_put(ctx.client_id(), &after, Some(stored.version))?;
            let events = status_events(&after);
            Ok(Plan::new(vec![write], after).events(events))
        })
        .await?;
    Ok(OpReply::for_client(after.view(), ctx.client_id()))
}

/// Whether the account exists, undeleted and unarchived (what `148` refuses).
async fn account_active(ctx: &Ctx, account: &str) -> Result<bool, ApiError> {
    match records::active_account(ctx, account).await {
        Ok(_) => Ok(true),
        Err(e) if e.code() == "148" => Ok(false),
        Err(e) => Err(e),
    }
}

/// The daily processing: 08:00 America/Denver on business days (statuses final by 10:00).
pub const CUSTODY_BATCH: Batch = Batch {
    name: "custody",
    zone: MOUNTAIN,
    hours: &[8],
    every_day: false,
    due: batch_due!(due),
    process: batch_process!(process),
};

async fn due(ports: Arc<Ports>) -> Result<Vec<Due>, ApiError> {
    Ok(rec::due_requests(ports.store.as_ref())
        .await?
        .into_iter()
        .map(|(client_id, id)| Due { client_id, id })
        .collect())
}

/// The sandbox custodian's review of the request of `account` (CONTRACT): approved when it
/// still awaits review and the account's primary party has KYC `Auto Approved` or
/// `Manually Approved`; left as it is otherwise.
async fn process(ctx: Ctx, account: String) -> Result<bool, ApiError> {
    ctx.transact(async move |ctx, _| {
        let (store, client) = (ctx.store(), ctx.client_id());
        let Some(stored) = rec::request_of_account(store, client, &account).await? else {
            return Ok(Plan::answer(false));
        };
        // A deleted or archived account gets no custody account (part 3: "account active").
        if !stored.rec.status.awaits_review() || !account_active(&ctx, &account).await? {
            return Ok(Plan::answer(false));
        }
        let kyc_approved = match link::primary_party(store, client, &account).await? {
            Some(id) => records::load::<Party>(store, client, &id)
                .await?
                .is_some_and(|p| matches!(p.rec.kyc_status.as_str(), "Auto Approved" | "Manually Approved")),
            None => false,
        };
        if !kyc_approved {
            return Ok(Plan::answer(false));
        }
        let after = stored.rec.moved(RequestStatus::Approved, None, None, &ctx.now());
        let write = rec::request_put(client, &after, Some(stored.version))?;
        let events = status_events(&after);
        Ok(Plan::new(vec![write], true).events(events))
    })
    .await
}

/// `POST /operator/batches/custody/run`: the daily processing now.
async fn run(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    CUSTODY_BATCH.run_for_operator(&octx, &req).await
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createCustodyAccountRequest", op!(create))
        .op("requestCustodialAccount", op!(create))
        // The four names of model::custody::UPDATE_METHODS.
        .op("updateCustodyAccountRequest", op!(update))
        .op("updateCustodialAccountRequest", op!(update))
        .op("approveCustodyAccountRequest", op!(update))
        .op("approveCustodialAccountRequest", op!(update))
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/custody-requests/{custAccRequestID}/review",
            operator_op!(review),
        )
        .operator(Method::POST, "/operator/batches/custody/run", operator_op!(run))
}
