//! Funding reads of an offering: getOfferingDetails (funding totals and escrow account),
//! getOfferingPurchaseHistory (its trades) and getCustodianDetailsforOffering (wire and
//! check instructions). The totals and the history are kept by the trades group in the
//! offering item and the purchase-history index (`shared::model::offering`).

use serde_json::{json, Map, Value};
use shared::model::custodian_settings::CustodianSettings;
use shared::model::offering::{purchase_history, six_decimals};
use shared::webhooks::Event;
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{live_offering, record_event};

/// `getOfferingDetails`: `Offering purchased details` = an array of one object with
/// `escrowAccountNumber`, `pendingAmount`, `fundedAmount` and `committedAmount` (as
/// observed), amounts with six decimals.
pub async fn details(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &p).await?;
        let o = &s.rec;
        let mut record = Map::new();
        record.insert("escrowAccountNumber".into(), o.escrow_account_number.clone().into());
        record.insert("pendingAmount".into(), six_decimals(o.pending_amount).into());
        record.insert("fundedAmount".into(), six_decimals(o.funded_amount).into());
        record.insert("committedAmount".into(), six_decimals(o.committed_amount).into());
        let mut payload = Map::new();
        payload.insert("offeringId".into(), o.id.clone().into());
        payload.extend(record.clone());
        let reply = Reply::ok().with_value("Offering purchased details", Value::Array(vec![Value::Object(record)]));
        Ok(Plan::answer(reply).event(record_event("getOfferingDetails", &payload)))
    })
    .await
}

/// `getOfferingPurchaseHistory`: `Offering purchased details` = an object holding
/// `offering_purchase_history`, the offering's live trades oldest first (as observed).
pub async fn purchase_history_op(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &p).await?;
        let entries = purchase_history(ctx.store(), ctx.client_id(), &s.rec.id).await?;
        let trade_ids: Vec<&str> = entries.iter().map(|e| e.trade_id.as_str()).collect();
        let event = Event::new("getOfferingPurchaseHistory")
            .field("offeringId", s.rec.id.clone())
            .field("tradeIds", trade_ids.join(","));
        let history: Vec<Value> = entries.iter().map(|e| e.view(&s.rec)).collect();
        let reply = Reply::ok().with(
            "Offering purchased details",
            json!({"offering_purchase_history": history}),
        );
        Ok(Plan::answer(reply).event(event))
    })
    .await
}

/// `POST /v3/getCustodianDetailsforOffering`: `custodianDetails` with every documented key
/// (wire and check instructions only), values from the client's custodian settings, empty
/// strings where nothing is configured (CONTRACT.md).
pub async fn custodian(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &p).await?;
        let settings = CustodianSettings::load(ctx.store(), ctx.client_id()).await?;
        let event = Event::new("getCustodianDetailsforOffering")
            .field("offeringId", s.rec.id.clone())
            .field("name", settings.name.clone())
            .field("additionaldescription", settings.additionaldescription.clone());
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
