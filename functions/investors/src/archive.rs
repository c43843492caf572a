//! updatePartyEntityArchivestatus: archives or unarchives an individual party (`P…`) or an
//! entity (`E…`) named by `partyId`.

use shared::model::ids::no_party;
use shared::model::party::{ArchiveView, PartyRecord};
use shared::model::{Entity, Party};
use shared::records;
use shared::store::Write;
use shared::webhooks::view_event;
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};
use shared::{op, Routes};

/// The writes of the new status on the party or entity; `198` for an unknown or deleted ID.
async fn set<R: PartyRecord>(ctx: &Ctx, id: &str, archived: bool) -> Result<Vec<Write>, ApiError> {
    let now = ctx.now();
    let stored = records::live::<R>(ctx, id, no_party).await?;
    let mut r = stored.rec.clone();
    *r.archived_mut() = archived;
    *r.updated_mut() = now;
    records::replace(ctx.client_id(), &stored, &r)
}

/// `POST /v3/updatePartyEntityArchivestatus`: `partyId` and `archiveStatus` (both
/// required). Answers `partyDetails` = [true, [{partyId, archiveStatus}]] and sends the
/// same fields. Archived records show `partystatus` `Archived` in the lists.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let archived = p.archive_status()?;
    let flag = if archived { "1" } else { "0" };
    let view = ArchiveView {
        id: &id,
        archive_status: flag,
    };
    let event = view_event("updatePartyEntityArchivestatus", &view);
    let reply = Reply::ok().with("partyDetails", insert_array(view));
    ctx.transact(async move |ctx, _| {
        let writes = if id.starts_with('E') {
            set::<Entity>(&ctx, &id, archived).await?
        } else {
            set::<Party>(&ctx, &id, archived).await?
        };
        Ok(Plan::new(writes, ()).event(event.clone()))
    })
    .await?;
    Ok(reply)
}

pub fn routes() -> Routes {
    Routes::new().op("updatePartyEntityArchivestatus", op!(update))
}
