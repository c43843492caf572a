//! Custody disbursements (part 3; CONTRACT, "Custody disbursements"): money out of a custody
//! account, ACH to its external account or by wire. A disbursement holds its amount of the
//! settled custody balance from creation (never more than the balance, under any
//! concurrency) until it is rejected, terminated or failed; only the operator moves it.

use http::Method;
use serde::Deserialize;
use serde_json::Value;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::list::ListSpec;
use shared::model::custody::{
    disbursement_holds, disbursement_move_allowed, Disbursement, DISBURSEMENT_STATUSES, DISBURSEMENT_TYPES,
};
use shared::model::payments::{cents, check_aba, fund_amount};
use shared::records::{self, custody as rec, payments as pay, Stored};

use crate::requests::open_custody_account;
use shared::store::Write;
use shared::{op, operator_op, ApiError, Ctx, Params, Plan, Reply, Routes};

fn over_balance() -> ApiError {
    ApiError::invalid("amount", "above the account's settled custody balance")
}

/// The balance change of a disbursement moving from `from` to `to`: released when it stops
/// holding its amount, taken again (covered) when it holds it anew.
fn balance_write(client: &str, d: &Disbursement, from: &str, to: &str) -> Option<Write> {
    let amount = cents(d.amount);
    match (disbursement_holds(from), disbursement_holds(to)) {
        (true, false) => Some(rec::balance_change(client, &d.account_id, amount, false)),
        (false, true) => Some(rec::balance_change(client, &d.account_id, -amount, true)),
        _ => None,
    }
}

/// `POST /v3/createCustodyFundDisbursement`: `accountId`, `amount`, `type` (`ach`,
/// `wire_domestic`, `wire_international`) required; `bankId` and `bankAccountId` required
/// for wires only (kept null for ACH, which goes to the linked external account, `149`
/// without one); `additionalDetails` optional. The account needs an approved custody account
/// (`148`) and a settled custody balance that covers the amount (`106` naming `amount`).
/// Answers `custodyFundDisbursement`, status `pending`, its `requestId` a UUID.
async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["amount", "type", "additionalDetails"])?;
    let account = p.req(&["accountId"])?;
    let amount = fund_amount(&p.req(&["amount"])?)?;
    let kind = p.req(&["type"])?.trim().to_ascii_lowercase();
    if !DISBURSEMENT_TYPES.contains(&kind.as_str()) {
        return Err(ApiError::invalid("type", DISBURSEMENT_TYPES.join(", ")));
    }
    let wire = kind != "ach";
    let (bank_id, bank_account_id) = if wire {
        (
            Some(p.req(&["bankId"])?.trim().to_owned()),
            Some(p.req(&["bankAccountId"])?.trim().to_owned()),
        )
    } else {
        (None, None)
    };
    let additional_details = p.opt(&["additionalDetails"])?.filter(|d| !d.trim().is_empty());
    let (store, client) = (ctx.store(), ctx.client_id());
    let account = open_custody_account(&ctx, &account).await?;
    if !wire {
        // An ACH payout goes to the routing number on file: it must pass the ABA check.
        check_aba(&pay::usable_external(store, client, &account).await?.routing_number)?;
    }
    let now = ctx.now();
    let d = Disbursement {
        request_id: uuid::Uuid::new_v4().to_string(),
        account_id: account,
        amount,
        kind,
        bank_id,
        bank_account_id,
        additional_details,
        status: "pending".into(),
        created_date: now.clone(),
        updated_date: now,
        deleted: false,
    };
    let writes = records::insert(client, &d)?;
    let take = rec::balance_change(client, &d.account_id, -cents(d.amount), true);
    let d = ctx
        .transact(async move |_, _| Ok(Plan::new(writes.clone(), d.clone()).check(take.clone(), over_balance())))
        .await?;
    Ok(Reply::ok().with("custodyFundDisbursement", d.view()))
}

const LIST: ListSpec = ListSpec::newest_first("requestId")
    .ids(&["accountId"])
    .numbers(&["amount"])
    .texts(&["type", "bankId", "bankAccountId", "additionalDetails", "status"]);

/// `POST /v3/getCustodyFundDisbursements`: part 1's `filter` (JSON or bracket form, on
/// `requestId`, `accountId`, `type`, `status`, ...), `offset` (default 0) and `limit`
/// (default 10), over the caller's own disbursements, newest first. Answers
/// `custodyFundDisbursements` and `pagination`.
async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let mut pairs = Vec::new();
    for (k, v) in p.map() {
        let text = if k == "offset" || k == "limit" {
            // A JSON `2.0` is the integer 2 (CONTRACT, "Integral numbers").
            p.integer_text(k)?.unwrap_or_default()
        } else if k == "filter" || k == "sort" || k.starts_with("filter[") {
            match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }
        } else {
            continue;
        };
        pairs.push((k.clone(), text));
    }
    records::list::<Disbursement>(&ctx, &pairs, &LIST, "custodyFundDisbursements", |d, _| {
        records::raw(&d.view())
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusBody {
    status: String,
}

/// `PUT /operator/clients/{clientId}/custody-disbursements/{requestId}`: `{"status"}`, one of
/// part 3's (400 otherwise). A non-final status moves to any other, `reopened` only to
/// `in_review`, and `completed`, `terminated` and `failed` never (409); a move that would
/// hold the amount again needs the balance to cover it (409). 404 for an unknown
/// disbursement. Answers the disbursement with `clientId`.
async fn set_status(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: StatusBody = req.body()?;
    let to = body.status.trim().to_ascii_lowercase();
    if !DISBURSEMENT_STATUSES.contains(&to.as_str()) {
        return Err(OpError::BadRequest(format!(
            "status: one of {}",
            DISBURSEMENT_STATUSES.join(", ")
        )));
    }
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let id = req.param("requestId").to_owned();
    let after = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            let stored: Stored<Disbursement> = records::load(ctx.store(), client, &id)
                .await?
                .ok_or_else(|| ApiError::not_found(format!("no disbursement {id}")))?;
            let from = stored.rec.status.clone();
            if !disbursement_move_allowed(&from, &to) {
                return Err(ApiError::conflict(format!(
                    "disbursement {id} cannot move from {from} to {to}"
                )));
            }
            let mut after = stored.rec.clone();
            after.status.clone_from(&to);
            after.updated_date = ctx.now();
            let mut plan = Plan::new(records::replace(client, &stored, &after)?, after.clone());
            if let Some(w) = balance_write(client, &after, &from, &to) {
                plan = plan.check(
                    w,
                    ApiError::conflict(format!("the settled custody balance does not cover disbursement {id}")),
                );
            }
            Ok(plan)
        })
        .await?;
    Ok(OpReply::for_client(after.view(), ctx.client_id()))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createCustodyFundDisbursement", op!(create))
        .op("getCustodyFundDisbursements", op!(list))
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/custody-disbursements/{requestId}",
            operator_op!(set_status),
        )
}
