//! What the ATS operations share: securities and members as CONTRACT defines them.

use shared::model::ids::{no_offering, numeric_id};
use shared::model::offering::status;
use shared::model::Offering;
use shared::records::{offering, Stored};
use shared::{ApiError, Ctx};

/// A security: an approved, live offering of the caller (`138` otherwise), whose issuer is
/// `issuer` when one is named (`138` too).
pub async fn security(ctx: &Ctx, id: &str, issuer: Option<&str>) -> Result<Stored<Offering>, ApiError> {
    let id = numeric_id("securityId", id).map_err(|_| no_offering())?;
    let o = listed(ctx, &id).await?.ok_or_else(no_offering)?;
    if issuer.is_some_and(|i| i.trim() != o.rec.issuer_id) {
        return Err(no_offering());
    }
    Ok(o)
}

/// Offering `id` while it is a security (approved and not deleted): a book whose offering
/// is closed, cancelled, deleted or back to pending is halted, its orders resting unmatched.
pub async fn listed(ctx: &Ctx, id: &str) -> Result<Option<Stored<Offering>>, ApiError> {
    Ok(offering::load(ctx.store(), ctx.client_id(), id)
        .await?
        .filter(|o| !o.rec.deleted && o.rec.status == status::APPROVED))
}
