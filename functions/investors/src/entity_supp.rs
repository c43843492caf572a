//! Entity supplements: createEntitySupp and updateEntitySupp, one supplement per entity.

use serde_json::{Map, Value};
use shared::model::entity_supp::{EntitySupp, FIELDS};
use shared::records::{self, Stored};
use shared::webhooks::Event;
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};
use shared::{op, Routes};

use crate::entities::live_entity;
use crate::support::insert_once;

/// The names the entity's ID may travel under (`entityID` as the webhook spells it).
const ID: &[&str] = &["entityID", "entityId", "partyId"];

/// Sets every supplement field the request sends; `boSSN` must look like an SSN (`106`).
fn apply(p: &Params, s: &mut EntitySupp) -> Result<(), ApiError> {
    for name in FIELDS {
        if let Some(v) = p.opt(&[name])? {
            if *name == "boSSN" && !v.is_empty() {
                shared::model::validate::ssn(&v).map_err(|_| ApiError::invalid("boSSN", "must be xxx-xx-xxxx"))?;
            }
            s.fields.insert((*name).to_owned(), Value::String(v));
        }
    }
    Ok(())
}

/// The answer and webhook: `entityID`, the fields in part 1's order, then `trailing`.
fn respond(method: &str, s: &EntitySupp, trailing: &[(&str, &str)]) -> (Reply, Event) {
    let fields = s.record(trailing);
    let event = fields
        .iter()
        .fold(Event::new(method), |e, (k, v)| e.field(k, v.clone()));
    let record: Map<String, Value> = fields.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
    (Reply::ok().with("entityDetails", insert_array(record)), event)
}

/// `POST /v3/createEntitySupp`: the entity (`198` when unknown) gets its supplement; a
/// second one is `106` (use updateEntitySupp).
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let id = p.req(ID)?;
    let mut s = EntitySupp::default();
    apply(&p, &mut s)?;
    live_entity(&ctx, &id).await?;
    s.entity_id = id;
    s.stamps.created = ctx.now();
    s.stamps.created_ip = ctx.ip.to_string();
    let (reply, event) = respond(
        "createEntitySupp",
        &s,
        &[
            ("createdDate", &s.stamps.created),
            ("createdIpAddress", &s.stamps.created_ip),
        ],
    );
    let duplicate = ApiError::invalid("entityID", "the entity already has a supplement; use updateEntitySupp");
    ctx.transact(async move |ctx, _| Ok(insert_once(ctx.client_id(), &s, duplicate.clone())?.event(event.clone())))
        .await?;
    Ok(reply)
}

async fn load(ctx: &Ctx, id: &str) -> Result<Stored<EntitySupp>, ApiError> {
    live_entity(ctx, id).await?;
    match records::load::<EntitySupp>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) => Ok(s),
        None => Err(ApiError::invalid(
            "entityID",
            "the entity has no supplement; use createEntitySupp",
        )),
    }
}

/// `POST /v3/updateEntitySupp`: the fields sent replace the stored ones (re-applied to a
/// fresh copy after a concurrent change); the webhook ends with `updatedDate`.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let id = p.req(ID)?;
    apply(&p, &mut EntitySupp::default())?;
    ctx.transact(async move |ctx, _| {
        let stored = load(&ctx, &id).await?;
        let mut s = stored.rec.clone();
        apply(&p, &mut s)?;
        s.stamps.change(ctx.now(), ctx.ip.to_string());
        let (reply, event) = respond(
            "updateEntitySupp",
            &s,
            &[("createdDate", &s.stamps.created), ("updatedDate", &s.stamps.updated)],
        );
        Ok(Plan::new(records::replace(ctx.client_id(), &stored, &s)?, reply).event(event))
    })
    .await
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createEntitySupp", op!(create))
        .op("updateEntitySupp", op!(update))
}
