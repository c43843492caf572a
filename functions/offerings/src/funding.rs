//! Funding reads of an offering: getOfferingDetails (funding totals and escrow account),
//! getOfferingPurchaseHistory (its trades) and getCustodianDetailsforOffering (wire and
//! check instructions). The totals and the history are kept by the trades group in the
//! offering item and the purchase-history index (`shared::model::offering`).

use serde::Serialize;
use shared::model::custodian_settings::CustodianSettings;
use shared::model::offering::{FundingView, PurchaseView};
use shared::records::offering::purchase_history;
use shared::webhooks::view_event;
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{live_offering, offering_id};

/// The getOfferingDetails webhook: the offering ID, then the record.
#[derive(Serialize)]
struct FundingEvent<'a> {
    #[serde(rename = "offeringId")]
    offering_id: &'a str,
    #[serde(flatten)]
    funding: &'a FundingView,
}

/// The getOfferingPurchaseHistory answer.
#[derive(Serialize)]
struct PurchaseHistory {
    offering_purchase_history: Vec<PurchaseView>,
}

/// The getOfferingPurchaseHistory webhook: the trades answered.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PurchaseHistoryEvent<'a> {
    offering_id: &'a str,
    trade_ids: String,
}

/// The getCustodianDetailsforOffering webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustodianEvent<'a> {
    offering_id: &'a str,
    name: &'a str,
    additionaldescription: &'a str,
}

/// `getOfferingDetails`: `Offering purchased details` = an array of one object with
/// `escrowAccountNumber`, `pendingAmount`, `fundedAmount` and `committedAmount` (as
/// observed), amounts with six decimals.
pub async fn details(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let funding = s.rec.funding();
        let event = view_event(
            "getOfferingDetails",
            &FundingEvent {
                offering_id: &s.rec.id,
                funding: &funding,
            },
        );
        Ok(Plan::answer(Reply::ok().with("Offering purchased details", [funding])).event(event))
    })
    .await
}

/// `getOfferingPurchaseHistory`: `Offering purchased details` = an object holding
/// `offering_purchase_history`, the offering's live trades oldest first (as observed).
pub async fn purchase_history_op(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let entries = purchase_history(ctx.store(), ctx.client_id(), &s.rec.id).await?;
        let trade_ids: Vec<&str> = entries.iter().map(|e| e.trade_id.as_str()).collect();
        let event = view_event(
            "getOfferingPurchaseHistory",
            &PurchaseHistoryEvent {
                offering_id: &s.rec.id,
                trade_ids: trade_ids.join(","),
            },
        );
        let history = PurchaseHistory {
            offering_purchase_history: entries.iter().map(|e| e.view(&s.rec)).collect(),
        };
        Ok(Plan::answer(Reply::ok().with("Offering purchased details", history)).event(event))
    })
    .await
}

/// `POST /v3/getCustodianDetailsforOffering`: `custodianDetails` with every documented key
/// (wire and check instructions only), values from the client's custodian settings, empty
/// strings where nothing is configured (CONTRACT.md).
pub async fn custodian(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let settings = CustodianSettings::load(ctx.store(), ctx.client_id()).await?;
        let event = view_event(
            "getCustodianDetailsforOffering",
            &CustodianEvent {
                offering_id: &s.rec.id,
                name: &settings.name,
                additionaldescription: &settings.additionaldescription,
            },
        );
        Ok(Plan::answer(Reply::ok().with_value("custodianDetails", settings.details())).event(event))
    })
    .await
}

/// The funding routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("getOfferingDetails", op!(details))
        .op("getOfferingPurchaseHistory", op!(purchase_history_op))
        .op("getCustodianDetailsforOffering", op!(custodian))
}
