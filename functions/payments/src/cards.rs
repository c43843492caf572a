//! Card payments: linkCreditCard (the operator's `card-link` completes the investor's side),
//! getLinkedCreditCard, deleteCreditCard, ccFundMove (the trade amount), ccFundMovement (any
//! amount), getCCFundMoveHistory, getCCFundMoveInfo, the retired addCreditCard and
//! getCreditCard (`999`), and the 6 PM Eastern card batch that captures each `Pending` charge
//! through the card-processor port. A card charge holds the trade like an ACH debit: one
//! payment per trade. Shapes: `docs/payments.md`.

use std::sync::Arc;

use http::Method;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::Deserialize;
use serde_json::{json, Value};
use shared::batches::{Batch, Due};
use shared::billing::billing;
use shared::calendar::EASTERN;
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::ids::{numeric_id, AccountId};
use shared::model::payments::{
    fund_amount, money, no_provider, CardCharge, FundMove, FundStatus, LinkSession, LinkedCard, FUND_MOVE,
};
use shared::providers::payments::{BankLinks, CardProcessor, Sandbox};
use shared::records::payments as pay;
use shared::records::trade;
use shared::records::{self, active_account};
use shared::{batch_due, batch_process, op, operator_op, ApiError, Ctx, Params, Plan, Ports, Reply, Routes};

use crate::ach::{move_writes, not_funded, paid_trade, trade_writes, trade_writes_or_check, void_if_offering_ended};
use crate::batch::due_in;

/// The card processor in force (the sandbox; a real processor adapter fills the same port).
fn processor() -> impl CardProcessor + BankLinks {
    Sandbox
}

/// `149`: no card is linked to the account.
fn no_card() -> ApiError {
    ApiError::coded("149", "No credit card is linked to this account")
}

/// `710`: a card is linked already (OBSERVED-MORE).
fn already_linked() -> ApiError {
    ApiError::coded("710", "A credit card is already linked to this account")
}

/// The kind of link a card link is, in its key.
const CARD: &str = "CARD";

/// `POST /v3/linkCreditCard`: `accountId`; answers `accountDetails` = the URL where the
/// investor links a card (the operator's `card-link` completes it in the sandbox); `710`
/// when one is linked.
pub async fn link(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = AccountId::param(&p, &["accountId"])?;
    active_account(&ctx, account.as_str()).await?;
    let (store, client) = (ctx.store(), ctx.client_id());
    if records::owned::<LinkedCard>(store, client, account.as_str())
        .await?
        .is_some()
    {
        return Err(already_linked());
    }
    let session = LinkSession {
        account_id: account.as_str().to_owned(),
        id: shared::ids::unique(),
        created_date: ctx.now(),
        ip_address: ctx.ip.to_string(),
    };
    store.write(vec![pay::link_put(client, CARD, &session)?]).await?;
    let url = processor().link_url("card", &session.id);
    Ok(Reply::ok().with_value("accountDetails", Value::from(url)))
}

/// The account's linked card, or `148` / `149`.
async fn card_of(ctx: &Ctx, p: &Params) -> Result<shared::records::Stored<LinkedCard>, ApiError> {
    let account = AccountId::param(p, &["accountId"])?;
    active_account(ctx, account.as_str()).await?;
    records::owned::<LinkedCard>(ctx.store(), ctx.client_id(), account.as_str())
        .await?
        .ok_or_else(no_card)
}

/// `POST /v3/getLinkedCreditCard`: `accountId`; `creditcardDetails` = {`accountId`,
/// `cardType`, `creditCardNumber` (masked but the last four digits), `expirationDate`
/// (`MMYY`), `createdDate`, `updatedDate`}; `149` when none is linked.
pub async fn get_linked(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let card = card_of(&ctx, &p).await?;
    Ok(Reply::ok().with("creditcardDetails", card.rec.view()))
}

/// `POST /v3/deleteCreditCard`: `accountId`; `creditcardDetails` = the deletion message;
/// `149` when none is linked. Charges already made keep their token.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let card = card_of(&ctx, &p).await?;
    ctx.store()
        .write(vec![records::owned_delete(ctx.client_id(), &card)])
        .await?;
    Ok(Reply::ok().with_value("creditcardDetails", Value::from("Credit card deleted successfully")))
}

/// `999`: addCreditCard and getCreditCard are retired (part 3).
pub async fn retired(_ctx: Ctx, _p: Params) -> Result<Reply, ApiError> {
    Err(ApiError::coded(
        "999",
        "This endpoint is deprecated and inoperative: use linkCreditCard and getLinkedCreditCard",
    ))
}

/// What a card charge takes, parsed (`106`, `732`).
struct Charge {
    account: String,
    trade: String,
    /// `None`: the trade amount (ccFundMove).
    amount: Option<Decimal>,
    ip: String,
}

fn parse(p: &Params, with_amount: bool) -> Result<Charge, ApiError> {
    let account = p.req(&["accountId"])?;
    let trade = numeric_id("tradeId", &p.req(&["tradeId"])?)?;
    let amount = if with_amount { Some(p.req(&["amount"])?) } else { None };
    let ip = p.req(&["createdIpAddress", "createdIPAddress"])?;
    let amount = amount.map(|a| fund_amount(&a)).transpose()?;
    Ok(Charge {
        account: AccountId::parse(&account)?.as_str().to_owned(),
        trade,
        amount,
        ip,
    })
}

/// A card charge for a trade: the account (`148`), the trade of the account (`188`), its
/// primary party (`135`), a `CREDITCARD` trade (`194`), a linked card (`149`), no payment
/// holding the trade (`150`/`210`, then `190`), the amount within the client's card limit
/// (`106` naming `amount`), a card provider (`211`). `Pending` until the card batch;
/// billed in production.
async fn charge(ctx: Ctx, p: Params, with_amount: bool, method: &'static str) -> Result<Reply, ApiError> {
    let fields: &[&str] = if with_amount {
        &["amount", "createdIpAddress"]
    } else {
        &["createdIpAddress"]
    };
    ctx.check_fields(&p, fields)?;
    let req = parse(&p, with_amount)?;
    // Owned: a captured reference would keep the handler's future from being `Send`.
    let method = method.to_owned();
    let created = ctx
        .transact(async move |ctx, _| {
            let (store, client) = (ctx.store(), ctx.client_id());
            let (trade, escrow) = paid_trade(&ctx, &req.account, None, &req.trade).await?;
            if trade.rec.transaction_type != "CREDITCARD" {
                return Err(ApiError::coded("194", "Trade is not a credit card trade"));
            }
            let card = records::owned::<LinkedCard>(store, client, &req.account)
                .await?
                .ok_or_else(no_card)?
                .rec;
            not_funded(&ctx, &trade.rec).await?;
            // A trade total finer than a cent is charged up to the next cent, so that a
            // funded trade is never short of its amount.
            let amount = req
                .amount
                .unwrap_or(trade.rec.total_amount)
                .round_dp_with_strategy(2, RoundingStrategy::AwayFromZero);
            let (settings, _) = pay::settings(store, client).await?;
            if amount > settings.card_limit {
                return Err(ApiError::invalid(
                    "amount",
                    format!("above the card limit of {}", money(settings.card_limit)),
                ));
            }
            if settings.card_provider.is_none() {
                return Err(no_provider());
            }
            let now = ctx.now();
            let ref_num = ctx.next_id(FUND_MOVE).await?;
            let m = FundMove {
                account_id: req.account.clone(),
                trade_id: req.trade.clone(),
                offering_id: trade.rec.offering_id.clone(),
                kind: "card".into(),
                amount,
                fund_status: FundStatus::Pending,
                transaction_status: "Pending".into(),
                errors: String::new(),
                description: method.clone(),
                bank_name: String::new(),
                account_fullname: String::new(),
                account_number: String::new(),
                routing_number: String::new(),
                created_date: now.clone(),
                updated_date: now,
                created_ip: req.ip.clone(),
                escrow_account: escrow,
                test_entry: false,
                refund_of: String::new(),
                card: Some(CardCharge {
                    cc_reference: shared::documents::reference_code(),
                    token: card.token.clone(),
                    ..CardCharge::default()
                }),
                ref_num,
            };
            let mut writes = trade_writes_or_check(client, &m, &trade, &m.created_date)?;
            writes.extend(pay::move_new(client, &m)?);
            writes.extend(billing(&ctx, &method, &req.account, &m.ref_num)?);
            Ok(Plan::new(writes, m))
        })
        .await?;
    Ok(Reply::ok().with_value("transactionDetails", json!([created.card_created_view()])))
}

/// `POST /v3/ccFundMove` (billed in production): `accountId`, `tradeId`,
/// `createdIpAddress`; charges the trade amount. Answers `transactionDetails` = [{`accountId`,
/// `tradeId`, `offeringId`, `totalAmount`, `ccreferencenumber`, `fundStatus`,
/// `transactionstatus`}].
pub async fn fund_move(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    charge(ctx, p, false, "ccFundMove").await
}

/// `POST /v3/ccFundMovement` (billed): as ccFundMove with an `amount` of its own (two places
/// at most, `732` otherwise).
pub async fn fund_movement(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    charge(ctx, p, true, "ccFundMovement").await
}

/// `POST /v3/getCCFundMoveHistory`: `accountId`; `creditcardDetails` = the account's card
/// transactions, oldest first.
pub async fn history(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = AccountId::param(&p, &["accountId"])?;
    active_account(&ctx, account.as_str()).await?;
    let moves = pay::account_moves(ctx.store(), ctx.client_id(), account.as_str(), true).await?;
    let list: Vec<Value> = moves
        .iter()
        .map(|m| shared::model::object(&m.card_view()).into())
        .collect();
    Ok(Reply::ok().with_value("creditcardDetails", Value::Array(list)))
}

/// `POST /v3/getCCFundMoveInfo`: `RefNum`, `accountId`; `creditcardDetails` = [the
/// transaction]. `RefNum` may also be the `ccreferencenumber` the charge answered (the only
/// reference ccFundMove gives; one read of the account's card moves). An unknown one (or
/// another account's, or an ACH move's) is `106`.
pub async fn info(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let unknown = || ApiError::invalid("RefNum", "no card transaction of this account");
    let raw = p.req(&["RefNum", "refNum"])?;
    let account = AccountId::param(&p, &["accountId"])?;
    active_account(&ctx, account.as_str()).await?;
    let ours = |m: &FundMove| m.is_card() && m.account_id == account.as_str();
    let by_ref_num = match numeric_id("RefNum", &raw) {
        Ok(ref_num) => pay::fund_move(ctx.store(), ctx.client_id(), &ref_num)
            .await?
            .map(|m| m.rec)
            .filter(ours),
        Err(_) => None,
    };
    let found = match by_ref_num {
        Some(m) => Some(m),
        None => pay::account_moves(ctx.store(), ctx.client_id(), account.as_str(), true)
            .await?
            .into_iter()
            .find(|m| m.card.as_ref().is_some_and(|c| c.cc_reference == raw.trim())),
    };
    let m = found.ok_or_else(unknown)?;
    Ok(Reply::ok().with_value("creditcardDetails", json!([m.card_view()])))
}

/// The card batch: 18:00 America/New_York on business days.
pub const CARD_BATCH: Batch = Batch {
    name: "card",
    zone: EASTERN,
    hours: &[18],
    every_day: false,
    due: batch_due!(card_due),
    process: batch_process!(capture),
};

async fn card_due(ports: Arc<Ports>) -> Result<Vec<Due>, ApiError> {
    due_in(ports, pay::CARD_DUE).await
}

/// Captures charge `ref_num` if it is still `Pending`: `Settled` (the trade `FUNDED`) when
/// the card approves, `Declined` (the trade free again) when it does not; `Voided`, asking
/// nothing, when its offering stopped taking investments since. The processor is
/// asked with the `RefNum` as its idempotency reference, so a retried attempt charges once.
async fn capture(ctx: Ctx, ref_num: String) -> Result<bool, ApiError> {
    ctx.transact(async move |ctx, _| {
        let client = ctx.client_id();
        let stored = match pay::fund_move(ctx.store(), client, &ref_num).await? {
            Some(m) if m.rec.fund_status == FundStatus::Pending && m.rec.is_card() => m,
            _ => return Ok(Plan::answer(false)),
        };
        if let Some(voided) = void_if_offering_ended(&ctx, &stored).await? {
            let (writes, _) = move_writes(client, &stored, &voided, true)?;
            return Ok(Plan::new(writes, true));
        }
        let mut card = stored.rec.card.clone().unwrap_or_default();
        let answer = processor().capture(&card.token, stored.rec.amount, &stored.rec.ref_num);
        card.processor_transaction_id = answer.transaction_id;
        card.processor_transaction_message.clone_from(&answer.message);
        card.processor_token_message = answer.token_message;
        let (status, error) = if answer.approved {
            (FundStatus::Settled, String::new())
        } else {
            (FundStatus::Declined, answer.message)
        };
        let mut after = stored.rec.moved(status, &error, &ctx.now());
        if status == FundStatus::Declined {
            // A card's transactionstatus is the processor's answer: a declined charge was
            // never approved.
            after.transaction_status = "Declined".into();
        }
        after.card = Some(card);
        let (mut writes, _) = move_writes(client, &stored, &after, true)?;
        let trade = trade::existing(ctx.store(), client, &after.trade_id).await?;
        writes.extend(trade_writes(client, &after, &trade, &after.updated_date)?);
        Ok(Plan::new(writes, true))
    })
    .await
}

/// `POST /operator/batches/card/run`: captures every `Pending` charge now.
async fn run(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    CARD_BATCH.run_for_operator(&octx, &req).await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CardLinkBody {
    card_number: String,
    expiry: String,
}

/// `POST /operator/clients/{clientId}/accounts/{accountId}/card-link`: `{"cardNumber",
/// "expiry": "MM/YY"}`; the investor's side of linkCreditCard in the sandbox: the card is
/// tokenized and linked (replacing one linked before). 200 the linked card (as
/// getLinkedCreditCard) with `clientId`; 400 a card the sandbox refuses; 404 an unknown
/// client or account.
async fn card_link(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let body: CardLinkBody = req.body()?;
    let token = processor()
        .tokenize(body.card_number.trim(), body.expiry.trim())
        .map_err(OpError::BadRequest)?;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let account = req.param("accountId").to_owned();
    let unknown = format!("no account {account} of client {}", ctx.client_id());
    let (brand, expiry) = (token.brand.to_owned(), body.expiry.trim().to_owned());
    let card = ctx
        .transact(async move |ctx, _| {
            let client = ctx.client_id();
            active_account(&ctx, &account)
                .await
                .map_err(|_| ApiError::not_found(unknown.clone()))?;
            let before = records::owned::<LinkedCard>(ctx.store(), client, &account).await?;
            let now = ctx.now();
            let card = LinkedCard {
                account_id: account.clone(),
                brand: brand.clone(),
                last4: token.last4.clone(),
                expiry: expiry.clone(),
                token: token.token.clone(),
                created_date: before
                    .as_ref()
                    .map_or_else(|| now.clone(), |b| b.rec.created_date.clone()),
                updated_date: now,
            };
            let writes = vec![
                records::owned_put(client, &card, before.map(|b| b.version))?,
                pay::link_clear(client, CARD, &account),
            ];
            Ok(Plan::new(writes, card))
        })
        .await?;
    Ok(OpReply::for_client(card.view(), ctx.client_id()))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("linkCreditCard", op!(link))
        .op("getLinkedCreditCard", op!(get_linked))
        .op("deleteCreditCard", op!(delete))
        .op("addCreditCard", op!(retired))
        .op("getCreditCard", op!(retired))
        .op("ccFundMove", op!(fund_move))
        .op("ccFundMovement", op!(fund_movement))
        .op("getCCFundMoveHistory", op!(history))
        .op("getCCFundMoveInfo", op!(info))
        .operator(Method::POST, "/operator/batches/card/run", operator_op!(run))
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/accounts/{accountId}/card-link",
            operator_op!(card_link),
        )
}
