//! updatePartyEntityArchivestatus: archives or unarchives an individual party (`P…`) or an
//! entity (`E…`) named by `partyId`.

use serde_json::json;
use shared::records;
use shared::store::StoreError;
use shared::webhooks::Event;
use shared::{insert_array, ApiError, Ctx, Params, Reply};
use shared::{op, Routes};

use crate::entities::live_entity;
use crate::parties::live_party;

/// `archiveStatus`: `1` (or `true`) archives, `0` (or `false`) makes the record active again.
fn archive_status(p: &Params) -> Result<bool, ApiError> {
    match p.req(&["archiveStatus"])?.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(ApiError::invalid("archiveStatus", "must be 1 (archived) or 0 (active)")),
    }
}

/// Writes the new status on the party or entity; `198` for an unknown or deleted ID.
async fn set(ctx: &Ctx, id: &str, archived: bool, event: Event) -> Result<(), StoreOutcome> {
    let now = ctx.now();
    let writes = if id.starts_with('E') {
        let stored = live_entity(ctx, id).await?;
        let mut r = stored.rec.clone();
        r.archived = archived;
        r.updated = now;
        records::replace(ctx.client_id(), &stored, &r)?
    } else {
        let stored = live_party(ctx, id).await?;
        let mut r = stored.rec.clone();
        r.archived = archived;
        r.updated = now;
        records::replace(ctx.client_id(), &stored, &r)?
    };
    ctx.commit(writes, vec![event]).await.map_err(StoreOutcome::Store)
}

enum StoreOutcome {
    Api(ApiError),
    Store(StoreError),
}

impl From<ApiError> for StoreOutcome {
    fn from(e: ApiError) -> Self {
        StoreOutcome::Api(e)
    }
}

/// `POST /v3/updatePartyEntityArchivestatus`: `partyId` and `archiveStatus` (both
/// required). Answers `partyDetails` = [true, [{partyId, archiveStatus}]] and sends the
/// same fields. Archived records show `partystatus` `Archived` in the lists.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let archived = archive_status(&p)?;
    let flag = if archived { "1" } else { "0" };
    for _ in 0..5 {
        let event = Event::new("updatePartyEntityArchivestatus")
            .field("partyId", id.clone())
            .field("archiveStatus", flag.to_owned());
        match set(&ctx, &id, archived, event).await {
            Ok(()) => {
                let record = json!({"partyId": id, "archiveStatus": flag});
                return Ok(Reply::ok().with("partyDetails", insert_array(record)));
            }
            Err(StoreOutcome::Store(StoreError::ConditionFailed { .. } | StoreError::Conflict)) => continue,
            Err(StoreOutcome::Store(e)) => return Err(e.into()),
            Err(StoreOutcome::Api(e)) => return Err(e),
        }
    }
    Err(ApiError::internal("changed concurrently on every attempt"))
}

pub fn routes() -> Routes {
    Routes::new().op("updatePartyEntityArchivestatus", op!(update))
}
