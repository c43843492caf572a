//! Custody fund moves (part 3; CONTRACT, "Custody fund moves"): createCustodyFundMove debits
//! the account's external account into its custody account, `Pending` until the `ach`
//! batch submits it and the operator settles or returns it by its reference number (its
//! settlement adds to the custody balance disbursements draw on); updateCustodyFundMove
//! (designed) voids it while pending; getCustodyFundMoves lists them.

use rust_decimal::Decimal;
use serde_json::{json, Value};
use shared::model::ids::{no_account, numeric_id, AccountId};
use shared::model::payments::{
    ach_blocked, check_aba, fund_amount, money, no_provider, FundMove, FundStatus, CUSTODY_KIND, FUND_MOVE,
    SANDBOX_R01, SANDBOX_SETTLED,
};
use shared::model::Account;
use shared::records::{self, payments as pay};

use crate::requests::open_custody_account;
use shared::{op, ApiError, Ctx, Environment, Params, Plan, Reply, Routes};

/// Part 3's cap on one custody fund move.
const MOVE_CAP: Decimal = Decimal::from_parts(10_000_000, 0, 0, false, 2);

/// `POST /v3/createCustodyFundMove`: `accountId` and `amount` (a string, two places at most)
/// required, `description` optional. In CONTRACT's order: `106`/`732`; the account (`148`)
/// and its approved custody account (`148`); its external account (`149`); an ACH block
/// (`773`); the amount at most 100,000.00 and the client's custody risk limit (`106` naming
/// `amount`); an ACH provider (`211`). Answers `custodyTransaction`, `Pending` (its
/// `approvalStatus` `TEST ENTRY` when the external account has a sandbox test nickname).
async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, &["amount", "description"])?;
    let account = p.req(&["accountId"])?;
    let amount = fund_amount(&p.req(&["amount"])?)?;
    let description = p.opt(&["description"])?.unwrap_or_default();
    let (store, client) = (ctx.store(), ctx.client_id());
    let account = open_custody_account(&ctx, &account).await?;
    let ext = pay::usable_external(store, client, &account).await?;
    if pay::ach_blocked(store, client, &account).await? {
        return Err(ach_blocked());
    }
    // An ACH debit, as externalFundMove's: its routing number passes the ABA check (part 3).
    check_aba(&ext.routing_number)?;
    let (settings, _) = pay::settings(store, client).await?;
    let cap = MOVE_CAP.min(settings.custody_risk_limit);
    if amount > cap {
        return Err(ApiError::invalid(
            "amount",
            format!("at most {} (the custody fund move limit)", money(cap)),
        ));
    }
    if settings.ach_provider.is_none() {
        return Err(no_provider());
    }
    let now = ctx.now();
    let m = FundMove {
        ref_num: ctx.next_id(FUND_MOVE).await?,
        account_id: account,
        trade_id: String::new(),
        offering_id: String::new(),
        kind: CUSTODY_KIND.into(),
        amount,
        fund_status: FundStatus::Pending,
        transaction_status: "Pending".into(),
        errors: String::new(),
        description,
        bank_name: ext.bank_name.clone(),
        account_fullname: ext.full_name.clone(),
        account_number: ext.account_number.clone(),
        routing_number: ext.routing_number.clone(),
        created_date: now.clone(),
        updated_date: now,
        created_ip: ctx.ip.to_string(),
        card: None,
        escrow_account: String::new(),
        // The test nicknames mean something in the sandbox only (part 3).
        test_entry: ctx.app.env == Environment::Sandbox
            && (ext.nickname == SANDBOX_SETTLED || ext.nickname == SANDBOX_R01),
        refund_of: String::new(),
    };
    let writes = pay::move_new(client, &m)?;
    let m = ctx
        .transact(async move |_, _| Ok(Plan::new(writes.clone(), m.clone())))
        .await?;
    Ok(Reply::ok().with("custodyTransaction", m.custody_view()))
}

/// `POST /v3/getCustodyFundMoves`: `accountId` optional (`148` when it names no account of
/// the caller). Answers `custodyTransactions` (by account, oldest first) and `pagination`.
async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = match p.opt(&["accountId"])?.filter(|a| !a.trim().is_empty()) {
        Some(a) => {
            let id = AccountId::parse(&a)?;
            records::live::<Account>(&ctx, id.as_str(), no_account).await?;
            Some(id)
        }
        None => None,
    };
    let moves = pay::custody_moves(ctx.store(), ctx.client_id(), account.as_ref().map(AccountId::as_str)).await?;
    let records: Vec<Value> = moves
        .iter()
        .map(|m| Value::Object(shared::model::object(&m.custody_view())))
        .collect();
    let pagination = json!({
        "totalRecords": records.len(),
        "startIndex": 0,
        "endIndex": records.len().saturating_sub(1),
    });
    Ok(Reply::ok()
        .with_value("custodyTransactions", Value::Array(records))
        .with_value("pagination", pagination))
}

/// `POST /v3/updateCustodyFundMove` (designed): `accountId` and `referenceNumber` (alias
/// `RefNum`). Voids the account's custody fund move while it is `Pending` (`224` after);
/// `148` for an unknown account, `106` for a reference that names no custody move of it.
/// Answers `custodyTransaction` as voided.
async fn void(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let raw = p.req(&["referenceNumber", "RefNum"])?;
    let unknown = || ApiError::invalid("referenceNumber", "no custody fund move of this account");
    let ref_num = numeric_id("referenceNumber", &raw).map_err(|_| unknown())?;
    let account = records::live::<Account>(&ctx, account.trim(), no_account).await?.rec.id;
    let after = ctx
        .transact(async move |ctx, _| {
            let stored = match pay::fund_move(ctx.store(), ctx.client_id(), &ref_num).await? {
                Some(m) if m.rec.is_custody() && m.rec.account_id == account => m,
                _ => return Err(unknown()),
            };
            if stored.rec.fund_status != FundStatus::Pending {
                return Err(ApiError::coded("224", "Custody fund move is not in pending status"));
            }
            let after = stored.rec.moved(FundStatus::Voided, "", &ctx.now());
            let writes = pay::move_change(ctx.client_id(), &stored, &after)?;
            Ok(Plan::new(writes, after))
        })
        .await?;
    Ok(Reply::ok().with("custodyTransaction", after.custody_view()))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createCustodyFundMove", op!(create))
        .op("getCustodyFundMoves", op!(list))
        .op("updateCustodyFundMove", op!(void))
}
