//! Reviews that a client method and the operator API both make, so both apply the same
//! state change and fire the same webhook:
//!
//! - an accreditation request's status (updateAiRequest, updateAiVerification and the
//!   operator's `POST /operator/clients/{clientId}/ai-requests/{airequestId}/review`);
//! - the decision on a manual KYC/AML request (updateKycAmlStatus and the operator's
//!   `POST /operator/clients/{clientId}/kyc-requests/{requestId}/review`).
//!
//! Each is one transaction of the records it changes and its webhook's outbox entry,
//! conditioned on the versions read; a concurrent change makes it read again and re-plan.

use std::sync::{Arc, Mutex};

use serde::Deserialize;

use crate::ctx::Ctx;
use crate::documents::{self, Document};
use crate::error::ApiError;
use crate::model::accreditation::{account_after, decided_status, AiRequest, StatusChange, VERIFIED_ACCREDITED};
use crate::model::ids::{no_account, no_party};
use crate::model::kyc::KycRequest;
use crate::model::{Account, Entity, Party};
use crate::records::kyc::investor_of_request;
use crate::records::party::with_statuses;
use crate::records::{self, ai_documents, Stored};
use crate::store::Write;
use crate::tx::Plan;
use crate::webhooks::record_event;

/// The webhook a reviewer's status change of an accreditation request fires.
pub const AI_REVIEW_METHOD: &str = "updateAiVerification";
/// The webhook a KYC/AML review decision fires.
pub const KYC_REVIEW_METHOD: &str = "updateKycAmlStatus";

/// `152`: no request of the caller has this ID (the incumbent's text).
pub fn no_request() -> ApiError {
    ApiError::coded("152", "Request Id not exits.")
}

/// A numeric request ID as sent (`106` otherwise), without leading zeros.
pub fn numeric_id(name: &str, raw: &str) -> Result<String, ApiError> {
    raw.trim()
        .parse::<u64>()
        .map(|n| n.to_string())
        .map_err(|_| ApiError::invalid(name, "Numeric values only"))
}

/// A live, unarchived account of the caller, or `148`.
async fn active_account(ctx: &Ctx, id: &str) -> Result<Stored<Account>, ApiError> {
    match records::load::<Account>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) if !s.rec.deleted && !s.rec.archived => Ok(s),
        _ => Err(no_account()),
    }
}

/// Moves accreditation request `airequest_id` as `change` says: the request and, when the
/// status decides it (part 2: `Approved`, `rejected`), the account's `accreditedStatus`, in
/// one transaction with the `method` webhook (with `notes` when `with_notes`). An unknown
/// request is `152`; a request whose account is deleted or archived `148`. Answers the
/// request as stored and the account's `accreditedStatus` after the call.
pub async fn change_ai_request(
    ctx: &Ctx,
    airequest_id: &str,
    change: &StatusChange,
    method: &str,
    with_notes: bool,
) -> Result<(AiRequest, String), ApiError> {
    let (airequest_id, change, method) = (airequest_id.to_owned(), change.clone(), method.to_owned());
    // Issued once, on the first attempt that approves, and reused by re-planned attempts;
    // shared with this function, which discards it when the change finally fails.
    let letter: Arc<Mutex<Letter>> = Arc::default();
    let issued = letter.clone();
    let result = ctx
        .transact(async move |ctx, _| {
            let request = records::live::<AiRequest>(&ctx, &airequest_id, no_request).await?;
            let mut held = issued.lock().unwrap_or_else(|e| e.into_inner()).take();
            let planned = plan_ai_change(&ctx, &request, &change, &mut held).await;
            *issued.lock().unwrap_or_else(|e| e.into_inner()) = held;
            let (writes, after, accredited) = planned?;
            let event = after.event(&method, &accredited, with_notes);
            Ok(Plan::new(writes, (after, accredited)).event(event))
        })
        .await;
    if result.is_err() {
        let held = letter.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((doc, _)) = held {
            documents::discard(ctx, &[doc]).await;
        }
    }
    result
}

/// An approval's letter once issued: the document and the writes that record it.
type Letter = Option<(Document, Vec<Write>)>;

/// The writes of one attempt at an accreditation change: the request, the account when
/// its status changes (else a check of its version), on a decision the review status of
/// the account's verification documents, and on an approval the request's letter.
async fn plan_ai_change(
    ctx: &Ctx,
    request: &Stored<AiRequest>,
    change: &StatusChange,
    letter: &mut Letter,
) -> Result<(Vec<Write>, AiRequest, String), ApiError> {
    let client = ctx.client_id();
    let decided = decided_status(&change.status);
    let account = active_account(ctx, &request.rec.account_id).await?;
    let now = ctx.now();
    let after = request.rec.changed(change, &now);
    let mut writes = records::replace(client, request, &after)?;
    let accredited = match account_after(&account.rec, &change.status, &now) {
        Some(a) => {
            writes.extend(records::replace(client, &account, &a)?);
            a.accredited_status
        }
        None => {
            writes.push(records::unchanged(client, &account));
            account.rec.accredited_status.clone()
        }
    };
    if decided.is_some() {
        writes.extend(ai_documents::set_documents_status(ctx, &account.rec.id, change.status.trim()).await?);
    }
    let newly_approved = decided == Some(VERIFIED_ACCREDITED) && decided_status(&request.rec.status) != decided;
    if newly_approved {
        if letter.is_none() {
            *letter = Some(ai_documents::issue_letter(ctx, &account.rec.id, &request.rec.id).await?);
        }
        if let Some((_, w)) = letter {
            writes.extend(w.iter().cloned());
        }
    }
    Ok((writes, after, accredited))
}

/// A KYC/AML decision: the statuses to set (at least one) and optional notes.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(deny_unknown_fields)]
pub struct KycDecision {
    pub kyc_status: Option<String>,
    pub aml_status: Option<String>,
    pub notes: Option<String>,
}

/// The investor a manual KYC/AML request is for.
enum Investor {
    Party(Stored<Party>),
    Entity(Stored<Entity>),
    Account(Stored<Account>),
}

impl Investor {
    /// `A…` an account (`148` when unknown, deleted or archived), `E…` an entity, anything
    /// else an individual party (`198` when unknown or deleted), as requestKycAml reads them.
    async fn load(ctx: &Ctx, id: &str) -> Result<Investor, ApiError> {
        Ok(if id.starts_with('A') {
            Investor::Account(active_account(ctx, id).await?)
        } else if id.starts_with('E') {
            Investor::Entity(records::live::<Entity>(ctx, id, no_party).await?)
        } else {
            Investor::Party(records::live::<Party>(ctx, id, no_party).await?)
        })
    }

    /// The versioned write of the decided statuses: `kycStatus` (and an account's `kycDate`)
    /// and `amlStatus` with `amlDate`, each only when decided; dates `MM-DD-YYYY`.
    fn decided(&self, client: &str, d: &KycDecision, date: &str, now: &str) -> Result<Vec<Write>, ApiError> {
        let (kyc, aml) = (d.kyc_status.as_deref(), d.aml_status.as_deref());
        match self {
            Investor::Party(s) => with_statuses(client, s, kyc, aml.map(|a| (a, date)), now),
            Investor::Entity(s) => with_statuses(client, s, kyc, aml.map(|a| (a, date)), now),
            Investor::Account(s) => {
                let mut r = s.rec.clone();
                if let Some(k) = kyc {
                    r.kyc_status = k.to_owned();
                    r.kyc_date = date.to_owned();
                }
                if let Some(a) = aml {
                    r.aml_status = a.to_owned();
                    r.aml_date = date.to_owned();
                }
                r.updated = now.to_owned();
                records::replace(client, s, &r)
            }
        }
    }
}

/// Applies a KYC/AML decision on `investor_id`: its status fields and the decision recorded
/// on its manual request, in one transaction with the updateKycAmlStatus webhook (the
/// request record's fields). Unknown investor: `198` (`148` for an account); no manual
/// request for it (requestKycAml): `106`. Answers the request as stored.
pub async fn decide_kyc(ctx: &Ctx, investor_id: &str, d: &KycDecision) -> Result<KycRequest, ApiError> {
    let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    if blank(&d.kyc_status) && blank(&d.aml_status) {
        return Err(ApiError::missing("kycStatus"));
    }
    let d = KycDecision {
        kyc_status: d.kyc_status.clone().filter(|s| !s.trim().is_empty()),
        aml_status: d.aml_status.clone().filter(|s| !s.trim().is_empty()),
        notes: d.notes.clone(),
    };
    let investor_id = investor_id.to_owned();
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let investor = Investor::load(&ctx, &investor_id).await?;
        let request = records::live::<KycRequest>(&ctx, &investor_id, || {
            ApiError::invalid(
                "partyId",
                format!("no manual KYC/AML request for {investor_id}: call requestKycAml first"),
            )
        })
        .await?;
        let now = ctx.now();
        let date = ctx.app.clock.now().format("%m-%d-%Y").to_string();
        let mut writes = investor.decided(client, &d, &date, &now)?;
        let mut after = request.rec.clone();
        if let Some(k) = &d.kyc_status {
            after.kyc_status = k.clone();
        }
        if let Some(a) = &d.aml_status {
            after.aml_status = a.clone();
        }
        if let Some(n) = &d.notes {
            after.notes = n.clone();
        }
        after.updated = now;
        writes.extend(records::replace(client, &request, &after)?);
        let event = record_event(KYC_REVIEW_METHOD, &after.details());
        Ok(Plan::new(writes, after).event(event))
    })
    .await
}

/// The manual request with this `requestId` (numeric, `106` otherwise), or `152`.
pub async fn kyc_request_by_id(ctx: &Ctx, request_id: &str) -> Result<Stored<KycRequest>, ApiError> {
    let id = numeric_id("requestId", request_id)?;
    let investor = investor_of_request(ctx.store(), ctx.client_id(), &id)
        .await?
        .ok_or_else(no_request)?;
    let request = records::live::<KycRequest>(ctx, &investor, no_request).await?;
    // The request of a deleted investor is not moved (`198`/`148`, as updateKycAmlStatus).
    Investor::load(ctx, &investor).await?;
    Ok(request)
}
