//! The offering lifecycle: deleteOffering, cancelOffering, closeOffering, reopenOffering and
//! getOfferingStatus. Each status change also sets the item's `acceptsInvestments`, which a
//! trade's share reservation is conditioned on, so no trade lands on an offering that has
//! just been closed, cancelled or deleted.

use shared::model::ids::OfferingId;
use shared::model::offering::{status, Offering, OfferingStatusView};
use shared::records::offering::{self, no_open_trades};
use shared::records::Stored;
use shared::store::Cond;
use shared::webhooks::{view_event, Event};
use shared::{op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{live_offering, offering_id};

/// The webhook of a lifecycle change: `offeringId` and the upper-case `offeringStatus`
/// part 1 gives (`CLOSED`, `CANCELED`, `REOPENED`, `DELETED`).
fn lifecycle_event(method: &str, id: &str, reported: &str) -> Event {
    let view = OfferingStatusView {
        offering_id: id.to_owned(),
        offering_status: reported.to_owned(),
    };
    view_event(method, &view)
}

/// Applies `change` to the live offering `id` and commits it with its webhook, re-reading
/// after a concurrent change. `change` answers the offering after the change and the extra
/// condition of the write, or the operation's own error.
async fn transition(
    ctx: Ctx,
    id: OfferingId,
    method: &str,
    reported: &str,
    change: impl Fn(&Stored<Offering>) -> Result<(Offering, Option<Cond>), ApiError> + Send,
) -> Result<Offering, ApiError> {
    // Built here: a `&str` captured by the attempt would make the handler future non-Send.
    let event = lifecycle_event(method, id.as_str(), reported);
    ctx.transact(async move |ctx, _| {
        let stored = live_offering(&ctx, &id).await?;
        let (mut after, cond) = change(&stored)?;
        after.updated = ctx.now();
        after.updated_ip = ctx.ip.to_string();
        let writes = offering::update(ctx.client_id(), &stored, &after, Vec::new(), cond)?;
        Ok(Plan::new(writes, after).event(event.clone()))
    })
    .await
}

/// `POST /v3/deleteOffering`: a virtual delete (then `138` everywhere); webhook `DELETED`.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    transition(ctx, offering_id(&p)?, "deleteOffering", "DELETED", |s| {
        let mut o = s.rec.clone();
        o.deleted = true;
        Ok((o, None))
    })
    .await?;
    Ok(Reply::ok().with("offeringDetails", "Offer deleted successfully!"))
}

/// `POST /v3/cancelOffering`: from any status to `cancelled` (stored); no refunds (investors
/// are refunded with cancelInvestment). Answers `Financial offering details` = the offering
/// ID; webhook `CANCELED`.
pub async fn cancel(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let o = transition(ctx, offering_id(&p)?, "cancelOffering", "CANCELED", |s| {
        let mut o = s.rec.clone();
        o.status = status::CANCELLED.into();
        Ok((o, None))
    })
    .await?;
    Ok(Reply::ok().with("Financial offering details", o.id))
}

/// `106` naming the trades that keep an offering from closing.
fn open_trades_error(n: i64) -> ApiError {
    ApiError::invalid(
        "offeringId",
        format!(
            "the offering cannot be closed: {n} trade(s) are not Funded, Settled, Unwind Settled, Rejected or Canceled"
        ),
    )
}

/// `POST /v3/closeOffering`: from any status to `closed`, only when every trade of the
/// offering is Funded, Settled, Unwind Settled, Rejected or Canceled (`106` otherwise; with
/// no trades it closes). Trades are not moved. The write is conditioned on the trades
/// group's count of open trades on the offering item, so a trade created concurrently
/// either stops the close or is refused itself. Answers `OfferID`; webhook `CLOSED`.
pub async fn close(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let o = transition(ctx, offering_id(&p)?, "closeOffering", "CLOSED", |s| {
        if s.rec.open_trades > 0 {
            return Err(open_trades_error(s.rec.open_trades));
        }
        let mut o = s.rec.clone();
        if o.status != status::CLOSED {
            o.status_before_close = o.status.clone();
        }
        o.status = status::CLOSED.into();
        Ok((o, Some(no_open_trades())))
    })
    .await?;
    Ok(Reply::ok().with("OfferID", o.id))
}

/// `reopenOffering`: a closed offering accepts investments again, with the status it had
/// before closing when that was `Pending`, `Approved` or `Denied` (`Pending` otherwise).
/// Another status is `106`. Answers `offeringDetails` = `[{offeringId, offeringStatus}]`;
/// webhook `REOPENED`.
pub async fn reopen(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let o = transition(ctx, offering_id(&p)?, "reopenOffering", "REOPENED", |s| {
        if s.rec.status != status::CLOSED {
            return Err(ApiError::invalid(
                "offeringId",
                format!("only a closed offering can be reopened (this one is {})", s.rec.status),
            ));
        }
        // A cancelled offering's investors are being refunded (part 2): closing it does not
        // make it reopenable.
        if s.rec.status_before_close == status::CANCELLED {
            return Err(ApiError::invalid(
                "offeringId",
                "the offering was cancelled before it closed: a cancelled offering is not reopened",
            ));
        }
        let mut o = s.rec.clone();
        let before = o.status_before_close.as_str();
        o.status = if [status::PENDING, status::APPROVED, status::DENIED].contains(&before) {
            before.to_owned()
        } else {
            status::PENDING.to_owned()
        };
        o.status_before_close.clear();
        Ok((o, None))
    })
    .await?;
    Ok(Reply::ok().with("offeringDetails", [o.status_view()]))
}

/// `getOfferingStatus`: `offeringDetails` = `[{offeringId, offeringStatus}]`, the stored
/// status (`Pending`, `Approved`, `Denied`, `closed`, `cancelled`).
pub async fn get_status(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let view = s.rec.status_view();
        let event = view_event("getOfferingStatus", &view);
        Ok(Plan::answer(Reply::ok().with("offeringDetails", [view])).event(event))
    })
    .await
}

/// The lifecycle routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("deleteOffering", op!(delete))
        .op("cancelOffering", op!(cancel))
        .op("closeOffering", op!(close))
        .op("reopenOffering", op!(reopen))
        .op("getOfferingStatus", op!(get_status))
}
