//! `GET /v3/offerings/{offeringId}/escrow/balances` (beta): scope `escrow_account.read`
//! (checked before any lookup); the offering must be the caller's and linked to an escrow
//! account (404 otherwise, closed accounts included); HTTP 502 `1502` while the escrow bank
//! is unavailable (safe to retry).

use http::Method;
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::model::Offering;
use shared::records::{self, escrow as rec, offering, payments as pay};
use shared::{op, ApiError, Ctx, Params, Reply, Routes};

/// The offering's status when it alone uses the account (markers of offerings relinked
/// elsewhere since are ignored); `None` when the account is shared.
async fn deal_status(ctx: &Ctx, number: &str, this: &Offering) -> Result<Option<String>, ApiError> {
    for id in rec::users(ctx.store(), ctx.client_id(), number).await? {
        if id == this.id {
            continue;
        }
        let other = records::load::<Offering>(ctx.store(), ctx.client_id(), &id).await?;
        if other.is_some_and(|o| !o.rec.deleted && o.rec.escrow_account_number == number) {
            return Ok(None);
        }
    }
    Ok(Some(this.status.clone()))
}

/// `balances`: part 3's fields with `reconciledAt`, summed over the whole account's ledger
/// (every offering sharing it gets the account-level figure).
async fn balances(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["offeringId"])?;
    let missing = || ApiError::not_found(format!("Offering {id} not found"));
    let o = match offering::load(ctx.store(), ctx.client_id(), id.trim()).await? {
        Some(o) if !o.rec.deleted => o.rec,
        _ => return Err(missing()),
    };
    let account = offering::escrow_account(ctx.store(), ctx.client_id(), &o.escrow_account_number)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("Offering {id} has no escrow account")))?;
    if !rec::bank_available(ctx.store()).await? {
        return Err(ApiError::Resource {
            http: 502,
            code: "1502",
            desc: "The escrow ledger is unreachable; retry later".into(),
        });
    }
    let ledger = pay::ledger(ctx.store(), ctx.client_id(), &account.number).await?;
    let deal = deal_status(&ctx, &account.number, &o).await?;
    let last = rec::reconciliation(ctx.store(), ctx.client_id(), &account.number).await?;
    Ok(Reply::ok().with("balances", account.balances(&ledger, deal.as_deref(), last.as_ref())))
}

pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("escrow_account.read", PiiLevel::Low, "escrow_account.read");
    Routes::new().resource(
        Method::GET,
        "/v3/offerings/{offeringId}/escrow/balances",
        READ,
        op!(balances),
    )
}
