//! What the trade operations share: parameters, the account and trade lookups in the
//! order CONTRACT.md gives (parameters `106`, then `148`, `138`, `188`, then the rules), the
//! pending-ACH guard, and the webhook of reads that answer a set.

use shared::model::ids::{no_account, no_trade, numeric_id, AccountId, Units};
use shared::model::trade::{ach_pending, Trade};
use shared::model::{validate, Account};
use shared::records::link::{primary_key, primary_party};
use shared::records::trade::{self, no_pending_ach};
use shared::records::{self, Stored};
use shared::store::{Cond, Write};
use shared::{ApiError, Ctx, Params, Plan};

/// An account of the caller that is not deleted and not archived (createTrade), or `148`.
pub async fn active_account(ctx: &Ctx, id: &AccountId) -> Result<Stored<Account>, ApiError> {
    match records::load::<Account>(ctx.store(), ctx.client_id(), id.as_str()).await? {
        Some(s) if !s.rec.deleted && !s.rec.archived => Ok(s),
        _ => Err(no_account()),
    }
}

/// An account of the caller that is not deleted (archived ones included: their trades can
/// still be read, edited and cancelled), or `148`.
pub async fn existing_account(ctx: &Ctx, id: &AccountId) -> Result<Stored<Account>, ApiError> {
    match records::load::<Account>(ctx.store(), ctx.client_id(), id.as_str()).await? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err(no_account()),
    }
}

/// The account's live primary party, or `135`.
pub async fn primary(ctx: &Ctx, account: &str) -> Result<String, ApiError> {
    primary_party(ctx.store(), ctx.client_id(), account)
        .await?
        .ok_or_else(shared::model::link::no_primary_party)
}

/// The check that the account still has its primary party marker when the trade commits.
pub fn primary_still_there(ctx: &Ctx, account: &str) -> Write {
    Write::Check {
        key: primary_key(ctx.client_id(), account),
        cond: Cond::Exists,
    }
}

/// The required `tradeId` parameter: `106` when missing or not numeric.
pub fn trade_id(p: &Params) -> Result<String, ApiError> {
    numeric_id("tradeId", &p.req(&["tradeId"])?)
}

/// A trade of the caller by the `tradeId` parameter (deleted ones included), or `188`.
pub async fn trade_of(ctx: &Ctx, id: &str) -> Result<Stored<Trade>, ApiError> {
    trade::existing(ctx.store(), ctx.client_id(), id).await
}

/// The account named by `account` and its trade `trade_id`: `148` for an unknown account,
/// `188` for an unknown trade or one of another account.
pub async fn account_trade(ctx: &Ctx, account: &AccountId, trade_id: &str) -> Result<Stored<Trade>, ApiError> {
    let a = existing_account(ctx, account).await?;
    let t = trade_of(ctx, trade_id).await?;
    if t.rec.account_id != a.rec.id {
        return Err(no_trade());
    }
    Ok(t)
}

/// A whole number of units (`106` when it is not an integer); positivity is the caller's rule.
pub fn units(p: &Params, name: &str) -> Result<i64, ApiError> {
    Units::param(p, name).map(Units::get)
}

/// An optional date parameter (`MM-DD-YYYY` or `YYYY-MM-DD`, stored as sent; blank allowed).
pub fn opt_date(p: &Params, name: &str) -> Result<Option<String>, ApiError> {
    match p.opt(&[name])? {
        Some(v) if !v.trim().is_empty() => validate::date(name, v.trim()).map(Some),
        other => Ok(other),
    }
}

/// The caller's `createdIpAddress` when sent (not blank), else its address.
pub fn ip_param(ctx: &Ctx, p: &Params, names: &[&str]) -> Result<String, ApiError> {
    Ok(p.opt(names)?
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| ctx.ip.to_string()))
}

/// `plan` with, when `guarded`, the check that no ACH fund move of the trade is pending
/// (`150` when a concurrent externalFundMove got there first).
pub fn guard_ach<T>(plan: Plan<T>, client: &str, trade_id: &str, guarded: bool) -> Plan<T> {
    if guarded {
        plan.check(no_pending_ach(client, trade_id), ach_pending())
    } else {
        plan
    }
}

/// `yes`/`no` (also `1`/`0`, `true`/`false`), answered as `yes` or `no`.
pub fn yes_no(p: &Params, name: &str) -> Result<&'static str, ApiError> {
    match p.req(&[name])?.trim().to_ascii_lowercase().as_str() {
        "yes" | "1" | "true" => Ok("yes"),
        "no" | "0" | "false" => Ok("no"),
        _ => Err(ApiError::invalid(name, "must be yes or no")),
    }
}
