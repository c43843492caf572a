//! Custody accounts (resource-style, scope `custody_account.read`, checked before any
//! lookup): `GET /v3/custody/accounts/{accountId}` and its positions (designed,
//! `docs/custody.md`). An account of another client, or one without a custody request, is
//! 404.

use http::Method;
use rust_decimal::Decimal;
use serde::Serialize;
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::model::custody::CustodyRequest;
use shared::model::payments::{money, FundStatus};
use shared::model::trade::TradeStatus;
use shared::model::{Account, Offering};
use shared::records::{self, custody as rec, payments as pay, trade, Stored};
use shared::{op, ApiError, Ctx, Params, Reply, Routes};

/// The caller's live account `id` and its custody request, else 404.
async fn custody_account(ctx: &Ctx, p: &Params) -> Result<Stored<CustodyRequest>, ApiError> {
    let id = p.req(&["accountId"])?;
    let missing = || ApiError::not_found(format!("Custody account {id} not found"));
    records::live::<Account>(ctx, &id, missing).await?;
    rec::request_of_account(ctx.store(), ctx.client_id(), &id)
        .await?
        .ok_or_else(missing)
}

/// `GET /v3/custody/accounts/{accountId}`: `custody_account`.
async fn read(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let r = custody_account(&ctx, &p).await?.rec;
    Ok(Reply::ok().with("custody_account", r.account_view()))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Cash {
    /// Custody fund moves settled into the account.
    settled_amount: String,
    /// Custody fund moves not settled yet (`Pending` or `Submitted`).
    pending_amount: String,
    /// Disbursements holding or paid out of the settled amount.
    disbursed_amount: String,
    /// What a new disbursement may draw on.
    available_amount: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Position {
    offering_id: String,
    issue_name: String,
    shares: i64,
    amount: String,
    trade_ids: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Positions {
    account_id: String,
    custody_status: &'static str,
    cash: Cash,
    securities: Vec<Position>,
}

/// `GET /v3/custody/accounts/{accountId}/positions` (designed): `positions` = the account's
/// cash (from its custody fund moves and disbursements) and its securities (its `FUNDED` and
/// `SETTLED` trades, one position per offering in offering order).
async fn positions(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let r = custody_account(&ctx, &p).await?.rec;
    let (store, client) = (ctx.store(), ctx.client_id());
    let moves = pay::custody_moves(store, client, Some(&r.account_id)).await?;
    let sum = |keep: &dyn Fn(FundStatus) -> bool| -> Decimal {
        moves.iter().filter(|m| keep(m.fund_status)).map(|m| m.amount).sum()
    };
    let settled = sum(&|s| s == FundStatus::Settled);
    let pending = sum(&|s| matches!(s, FundStatus::Pending | FundStatus::Submitted));
    // The balance is the settled amount less what disbursements hold (kept in the same
    // transactions as the moves and the disbursements).
    let available = Decimal::from(rec::balance_cents(store, client, &r.account_id).await?) / Decimal::from(100);
    let disbursed = settled - available;
    let mut securities: Vec<Position> = Vec::new();
    let mut trades = trade::of_account(store, client, &r.account_id).await?;
    trades.retain(|t| !t.deleted && matches!(t.status(), TradeStatus::Funded | TradeStatus::Settled));
    trades.sort_by_key(|t| (t.offering_id.len(), t.offering_id.clone(), t.id.len(), t.id.clone()));
    let mut totals: Vec<(String, i64, Decimal, Vec<String>)> = Vec::new();
    for t in trades {
        match totals.last_mut() {
            Some(last) if last.0 == t.offering_id => {
                last.1 += t.units;
                last.2 += t.total_amount;
                last.3.push(t.id);
            }
            _ => totals.push((t.offering_id.clone(), t.units, t.total_amount, vec![t.id])),
        }
    }
    for (offering_id, shares, amount, trade_ids) in totals {
        let issue_name = records::load::<Offering>(store, client, &offering_id)
            .await?
            .map(|o| o.rec.issue_name)
            .unwrap_or_default();
        securities.push(Position {
            offering_id,
            issue_name,
            shares,
            amount: money(amount),
            trade_ids,
        });
    }
    Ok(Reply::ok().with(
        "positions",
        Positions {
            account_id: r.account_id.clone(),
            custody_status: r.status.account_status(),
            cash: Cash {
                settled_amount: money(settled),
                pending_amount: money(pending),
                disbursed_amount: money(disbursed),
                available_amount: money(available),
            },
            securities,
        },
    ))
}

pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("custody_account.read", PiiLevel::Low, "custody_account.read");
    Routes::new()
        .resource(Method::GET, "/v3/custody/accounts/{accountId}", READ, op!(read))
        .resource(
            Method::GET,
            "/v3/custody/accounts/{accountId}/positions",
            READ,
            op!(positions),
        )
}
