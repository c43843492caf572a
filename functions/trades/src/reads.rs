//! Trade reads: getTrade, getTradeStatus, getTradesForOffering, getAllTrades (deprecated),
//! `GET /v3/trades`, getAccountTradeHistory and getPaymentInfo.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;

use http::Method;
use serde::Serialize;
use serde_json::Value;
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::list::ListSpec;
use shared::mask::MASK;
use shared::model::custodian_settings::CustodianSettings;
use shared::model::ids::{numeric_id, AccountId};
use shared::model::offering::{six_decimals, Offering};
use shared::model::trade::{CancelledView, Trade};
use shared::model::Account;
use shared::records;
use shared::records::offering;
use shared::records::trade::{self, pending_ach_key};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use shared::webhooks::{masked_record_event, view_event};

use crate::support::{account_trade, existing_account, trade_id, trade_of};
use shared::webhooks::ids_event;

/// Most records getAllTrades answers (as getAllOffers: part 1, Limits).
const ALL_MAX: usize = 10_000;

/// `POST /v3/getTrade`: `accountId` and `tradeId` (both required, as observed); `partyDetails`
/// = an array of the one trade record (OBSERVED.md), deleted trades included (their
/// `orderStatus` is `CANCELED`). Unknown account `148`; unknown trade, or another account's,
/// `188`. Webhook `getTrade`: the record's fields.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let id = trade_id(&p)?;
    // Checked after the other parameters: a malformed ID answers 148 as an unknown one.
    let account = AccountId::parse(&account)?;
    let t = ctx
        .transact(async move |ctx, _| {
            let t = account_trade(&ctx, &account, &id).await?.rec;
            let event = view_event("getTrade", &t.details());
            Ok(Plan::answer(t).event(event))
        })
        .await?;
    Ok(Reply::ok().with("partyDetails", [t.details()]))
}

/// `POST /v3/getTradeStatus`: `tradeId`; `tradeDetails` = an array of the one trade record
/// of OBSERVED-MORE.md. A non-numeric ID is `106`, an unknown one `188` (part 1).
pub async fn get_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let t = ctx
        .transact(async move |ctx, _| {
            let t = trade_of(&ctx, &id).await?.rec;
            let event = view_event("getTradeStatus", &t.status_view());
            Ok(Plan::answer(t).event(event))
        })
        .await?;
    Ok(Reply::ok().with("tradeDetails", [t.status_view()]))
}

/// `POST /v3/getTradesForOffering`: `offeringId` (`106` when missing or not numeric, `138`
/// when unknown or deleted); `Offering purchased details` = the offering's trades that are
/// not deleted, oldest first, as OBSERVED.md shows them (empty array when none). One query.
/// Webhook: `offeringId`, `tradeIds`.
pub async fn for_offering(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = numeric_id("offeringId", &p.req(&["offeringId"])?)?;
    let trades = ctx
        .transact(async move |ctx, _| {
            let o = offering::live(ctx.store(), ctx.client_id(), &id).await?.rec;
            let trades: Vec<Trade> = trade::of_offering(ctx.store(), ctx.client_id(), &o.id)
                .await?
                .into_iter()
                .filter(|t| !t.deleted)
                .collect();
            let event = ids_event(
                "getTradesForOffering",
                Some(("offeringId", &o.id)),
                "tradeIds",
                trades.iter().map(|t| t.id.clone()),
            );
            Ok(Plan::answer(trades).event(event))
        })
        .await?;
    let records: Vec<_> = trades.iter().map(Trade::offering_view).collect();
    Ok(Reply::ok().with("Offering purchased details", records))
}

/// Accounts and offerings read once each for a set of trades.
#[derive(Default)]
struct Lookups {
    accounts: HashMap<String, Option<Account>>,
    offerings: HashMap<String, Option<Offering>>,
}

impl Lookups {
    async fn account(&mut self, ctx: &Ctx, id: &str) -> Result<Option<&Account>, ApiError> {
        if !self.accounts.contains_key(id) {
            let a = records::load::<Account>(ctx.store(), ctx.client_id(), id).await?;
            self.accounts.insert(id.to_owned(), a.map(|s| s.rec));
        }
        Ok(self.accounts.get(id).and_then(Option::as_ref))
    }

    async fn offering(&mut self, ctx: &Ctx, id: &str) -> Result<Option<&Offering>, ApiError> {
        if !self.offerings.contains_key(id) {
            let o = offering::load(ctx.store(), ctx.client_id(), id).await?;
            self.offerings.insert(id.to_owned(), o.map(|s| s.rec));
        }
        Ok(self.offerings.get(id).and_then(Option::as_ref))
    }

    /// Reads every account and offering of `trades` at once, [`PREFETCH`] reads in flight: a
    /// list of thousands of trades over as many accounts would otherwise wait for each read
    /// in turn (minutes on a slow store, past part 1's 60 s).
    async fn prefetch(&mut self, ctx: &Ctx, trades: &[Trade]) -> Result<(), ApiError> {
        let accounts = trades.iter().map(|t| t.account_id.clone()).collect();
        let accounts = read_each(ctx, accounts, |ctx, id| async move {
            Ok(records::load::<Account>(ctx.store(), ctx.client_id(), &id)
                .await?
                .map(|s| s.rec))
        });
        self.accounts.extend(accounts.await?);
        let offerings = trades.iter().map(|t| t.offering_id.clone()).collect();
        let offerings = read_each(ctx, offerings, |ctx, id| async move {
            Ok(offering::load(ctx.store(), ctx.client_id(), &id).await?.map(|s| s.rec))
        });
        self.offerings.extend(offerings.await?);
        Ok(())
    }
}

/// `read` of each of `ids`, [`PREFETCH`] at a time: each ID with what it read.
async fn read_each<T, F: Future<Output = Result<Option<T>, ApiError>>>(
    ctx: &Ctx,
    ids: BTreeSet<String>,
    read: impl Fn(Ctx, String) -> F,
) -> Result<Vec<(String, Option<T>)>, ApiError> {
    use futures_util::{StreamExt, TryStreamExt};
    futures_util::stream::iter(ids)
        .map(|id| {
            let read = read(ctx.clone(), id.clone());
            async move { Ok::<_, ApiError>((id, read.await?)) }
        })
        .buffer_unordered(PREFETCH)
        .try_collect()
        .await
}

/// Reads a list's lookups keep in flight at once.
const PREFETCH: usize = 32;

/// `POST /v3/getAllTrades` (deprecated; `GET /v3/trades` replaces it): no parameters;
/// `TradeFinancialDetails` = the live trades, newest first, at most 10,000, with the fields
/// OBSERVED-MORE.md lists: the account's current name and statuses (`approvalStatus`,
/// `kycStatus`, `amlStatus`), the offering's `issueName`, `developerAPIKey`, `clientId` and
/// `clientName` masked (the client record has no other name than its ID). Each account and
/// offering is read once. Webhook: `tradeIds`.
pub async fn get_all(ctx: Ctx, _p: Params) -> Result<Reply, ApiError> {
    let records = ctx
        .transact(async move |ctx, _| {
            let trades = records::newest::<Trade>(&ctx, ALL_MAX).await?;
            let mut look = Lookups::default();
            look.prefetch(&ctx, &trades).await?;
            let mut records = Vec::with_capacity(trades.len());
            for t in &trades {
                let (account_name, approval, kyc, aml) = match look.account(&ctx, &t.account_id).await? {
                    Some(a) => (
                        a.account_name.clone(),
                        a.approval_status.clone(),
                        a.kyc_status.clone(),
                        a.aml_status.clone(),
                    ),
                    None => (t.account_name.clone(), String::new(), String::new(), String::new()),
                };
                let issue_name = look
                    .offering(&ctx, &t.offering_id)
                    .await?
                    .map(|o| o.issue_name.clone())
                    .unwrap_or_default();
                records.push(AllTradesView {
                    id: t.id.clone(),
                    created_date: t.stamps.created.clone(),
                    account_id: t.account_id.clone(),
                    issue_name,
                    order_id: t.id.clone(),
                    account_name,
                    offering_id: t.offering_id.clone(),
                    total_amount: six_decimals(t.total_amount),
                    transaction_type: t.transaction_type.clone(),
                    approval_status: approval,
                    kyc_status: kyc,
                    aml_status: aml,
                    order_status: t.status.clone(),
                    esign_status: t.esign_status.clone(),
                    developer_api_key: MASK,
                    client_name: MASK,
                    client_id: MASK,
                    field1: t.field1.clone(),
                });
            }
            let event = ids_event("getAllTrades", None, "tradeIds", trades.iter().map(|t| t.id.clone()));
            Ok(Plan::answer(records).event(event))
        })
        .await?;
    Ok(Reply::ok().with("TradeFinancialDetails", records))
}

/// getAllTrades' record (OBSERVED-MORE.md, in its order).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AllTradesView {
    id: String,
    created_date: String,
    account_id: String,
    issue_name: String,
    order_id: String,
    account_name: String,
    offering_id: String,
    total_amount: String,
    transaction_type: String,
    approval_status: String,
    kyc_status: String,
    aml_status: String,
    order_status: String,
    esign_status: String,
    #[serde(rename = "developerAPIKey")]
    developer_api_key: &'static str,
    client_name: &'static str,
    client_id: &'static str,
    field1: String,
}

const LIST: ListSpec = ListSpec::newest_first("tradeId")
    .ids(&["offeringId", "accountId", "partyId", "transactionId"])
    .numbers(&["unitPrice", "totalShares", "fees", "totalAmount"])
    .texts(&[
        "party_type",
        "escrowId",
        "transactionType",
        "orderStatus",
        "errors",
        "documentKey",
        "esignStatus",
        "users",
        "RRApprovalStatus",
        "RRName",
        "RRApprovalDate",
        "PrincipalApprovalStatus",
        "PrincipalName",
        "PrincipalDate",
        "closeId",
        "eligibleToClose",
        "field1",
        "field2",
        "field3",
        "archived_status",
        "archived",
        "createdIpAddress",
    ]);

/// The list filter of existing clients: `filter[]=offeringId:100000` (an array of
/// `field:value` strings, ANDed; OBSERVED-MORE.md) read as `filter[offeringId]=100000`.
/// Every other pair is left as it is.
fn observed_filters(pairs: &[(String, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| {
            let array_item = k
                .strip_prefix("filter[")
                .and_then(|rest| rest.strip_suffix(']'))
                .is_some_and(|inner| inner.bytes().all(|b| b.is_ascii_digit()));
            match v.split_once(':') {
                Some((field, value)) if array_item && LIST.field(field.trim()).is_some() => {
                    (format!("filter[{}]", field.trim()), value.trim().to_owned())
                }
                _ => (k.clone(), v.clone()),
            }
        })
        .collect()
}

/// `GET /v3/trades`: scope `trade.read` (any PII level: trades hold none); the list rules of
/// part 1, newest first; `trades` and `pagination`. The records carry `tradeId`,
/// `offeringId`, `accountId` and every stored field (see [`Trade::list_view`]); with
/// `deleted=true`, `archived` too.
pub async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let pairs = observed_filters(p.query_pairs());
    records::list::<Trade>(&ctx, &pairs, &LIST, "trades", |t, q| {
        records::raw(&t.list_view(q.deleted))
    })
    .await
}

/// `POST /v3/getAccountTradeHistory`: `accountId` (`148` when unknown or deleted);
/// `accountDetails` = one record per trade of the account (deleted ones included: it is the
/// account's history), newest first. The record: `in_id` (the trade ID), part 2's
/// cancelled-investment fields, `clientId` and `trade_developerAPIKey` (masked), the
/// account's `accountName`, `accreditedStatus`, `kycStatus`, `amlStatus`, and the offering's
/// `issueName`. One query for the trades, one read per distinct offering. Webhook:
/// `accountId`, `tradeIds`.
pub async fn account_history(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = AccountId::param(&p, &["accountId"])?;
    let (account, history) = ctx
        .transact(async move |ctx, _| {
            let account = existing_account(&ctx, &account).await?.rec;
            let trades = trade::of_account(ctx.store(), ctx.client_id(), &account.id).await?;
            let mut look = Lookups::default();
            let mut history = Vec::with_capacity(trades.len());
            for t in trades {
                let issue_name = look
                    .offering(&ctx, &t.offering_id)
                    .await?
                    .map(|o| o.issue_name.clone())
                    .unwrap_or_default();
                history.push((t, issue_name));
            }
            let event = ids_event(
                "getAccountTradeHistory",
                Some(("accountId", &account.id)),
                "tradeIds",
                history.iter().map(|(t, _)| t.id.clone()),
            );
            Ok(Plan::answer((account, history)).event(event))
        })
        .await?;
    let records: Vec<_> = history
        .iter()
        .map(|(t, issue_name)| HistoryView {
            in_id: &t.id,
            trade: t.cancelled_view(),
            client_id: MASK,
            trade_developer_api_key: MASK,
            account_name: &account.account_name,
            accredited_status: &account.accredited_status,
            kyc_status: &account.kyc_status,
            aml_status: &account.aml_status,
            issue_name,
        })
        .collect();
    Ok(Reply::ok().with("accountDetails", records))
}

/// getAccountTradeHistory's record.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HistoryView<'a> {
    #[serde(rename = "in_id")]
    in_id: &'a str,
    #[serde(flatten)]
    trade: CancelledView<'a>,
    client_id: &'static str,
    #[serde(rename = "trade_developerAPIKey")]
    trade_developer_api_key: &'static str,
    account_name: &'a str,
    accredited_status: &'a str,
    kyc_status: &'a str,
    aml_status: &'a str,
    issue_name: &'a str,
}

/// `POST /v3/getPaymentInfo`: `tradeId` (required), `accountId` (optional; when sent the
/// trade must be that account's, `188` otherwise). Answers `paymentInfo` = an array of one
/// object: how the trade is to be paid (`transactionType`, `unitPrice`, `totalShares`,
/// `fees`, `totalAmount`, `orderStatus`), where the money goes (`escrowAccountNumber`, the
/// offering's current escrow account, and `custodianDetails`, the client's wire and check
/// instructions as getCustodianDetailsforOffering answers them) and whether an ACH fund
/// move is pending (`achPending` `yes`/`no`, the payments group's marker). Webhook: the
/// object's text fields, the custodian's bank numbers masked.
pub async fn payment_info(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = trade_id(&p)?;
    let account = p
        .opt(&["accountId"])?
        .filter(|a| !a.trim().is_empty())
        .map(|a| AccountId::parse(&a))
        .transpose()?;
    let info = ctx
        .transact(async move |ctx, _| {
            let t = match &account {
                Some(account) => account_trade(&ctx, account, &id).await?.rec,
                None => trade_of(&ctx, &id).await?.rec,
            };
            let escrow = offering::load(ctx.store(), ctx.client_id(), &t.offering_id)
                .await?
                .map(|o| o.rec.escrow_account_number)
                .unwrap_or_else(|| t.escrow_id.clone());
            let pending = ctx
                .store()
                .get(&pending_ach_key(ctx.client_id(), &t.id))
                .await?
                .is_some();
            let settings = CustodianSettings::load(ctx.store(), ctx.client_id()).await?;
            let info = PaymentInfoView {
                trade_id: t.id.clone(),
                account_id: t.account_id.clone(),
                offering_id: t.offering_id.clone(),
                transaction_type: t.transaction_type.clone(),
                unit_price: six_decimals(t.unit_price),
                total_shares: t.units.to_string(),
                fees: six_decimals(t.fees),
                total_amount: six_decimals(t.total_amount),
                order_status: t.status.clone(),
                escrow_account_number: escrow,
                ach_pending: if pending { "yes" } else { "no" },
                custodian_details: settings.details(),
            };
            // The custodian's bank numbers, shown to the caller, are masked in the webhook.
            let key = ctx.client.webhook_key.as_deref();
            let event = masked_record_event("getPaymentInfo", shared::model::object(&info), key)?;
            Ok(Plan::answer(info).event(event))
        })
        .await?;
    Ok(Reply::ok().with("paymentInfo", [info]))
}

/// getPaymentInfo's object, also its webhook's fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PaymentInfoView {
    trade_id: String,
    account_id: String,
    offering_id: String,
    transaction_type: String,
    unit_price: String,
    total_shares: String,
    fees: String,
    total_amount: String,
    order_status: String,
    escrow_account_number: String,
    ach_pending: &'static str,
    custodian_details: Value,
}

/// The read routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("trade.read", PiiLevel::Low, "trade.read");
    Routes::new()
        .op("getTrade", op!(get))
        .op("getTradeStatus", op!(get_status))
        .op("getTradesForOffering", op!(for_offering))
        .op("getAllTrades", op!(get_all))
        .op("getAccountTradeHistory", op!(account_history))
        .op("getPaymentInfo", op!(payment_info))
        .resource(Method::GET, "/v3/trades", READ, op!(list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_array_filters_become_bracket_filters() {
        let pairs = vec![
            ("filter[]".to_owned(), "offeringId:100001".to_owned()),
            ("filter[0]".to_owned(), "accountId: A1000000".to_owned()),
            ("filter[orderStatus]".to_owned(), "CREATED".to_owned()),
            ("filter[]".to_owned(), "nosuch:1".to_owned()),
            ("limit".to_owned(), "5".to_owned()),
        ];
        assert_eq!(
            observed_filters(&pairs),
            vec![
                ("filter[offeringId]".to_owned(), "100001".to_owned()),
                ("filter[accountId]".to_owned(), "A1000000".to_owned()),
                ("filter[orderStatus]".to_owned(), "CREATED".to_owned()),
                ("filter[]".to_owned(), "nosuch:1".to_owned()),
                ("limit".to_owned(), "5".to_owned()),
            ]
        );
    }
}
