//! Entity parties: createEntity, updateEntity, getEntity, searchEntity, deleteEntity and
//! `GET /v3/entities`.

use http::Method;
use shared::auth::PiiLevel;
use shared::http::router::{Handler, ScopeReq};
use shared::list::ListSpec;
use shared::model::ids::no_party;
use shared::model::party::{PartyRef, Setter};
use shared::model::{validate, Entity};
use shared::records;
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};
use shared::{list_op, op, Routes};

use crate::support::{apply_texts, require, Checks};

const FIELDS: &[&str] = &[
    "entityName",
    "primCountry",
    "primAddress1",
    "primCity",
    "primState",
    "primZip",
    "emailAddress",
    "domicile",
    "entityType",
    "entityDesc",
    "ein",
    "primAddress2",
    "emailAddress2",
    "phone",
    "phone2",
    "notes",
    "totalAssets",
    "ownersAI",
    "KYCstatus",
    "AMLstatus",
    "AMLdate",
    "tags",
    "formationDate",
];

/// createEntity's required parameters (the first of [`FIELDS`]), in the order `106`
/// reports them.
const REQUIRED: &[&str] = FIELDS.split_at(7).0;

/// The free-text parameters only entities take, and where each is stored.
const TEXT: &[Setter<Entity>] = &[
    ("entityName", |r, v| r.entity_name = v),
    ("entityType", |r, v| r.entity_type = v),
    ("entityDesc", |r, v| r.entity_desc = v),
    ("ein", |r, v| r.ein = v),
    ("ownersAI", |r, v| r.owners_ai = v),
];

/// Sets every parameter the request sends (and only those), checking formats (`106`).
fn apply(p: &Params, r: &mut Entity) -> Result<(), ApiError> {
    apply_texts(p, r, TEXT)?;
    // Part 2: two letters, `NOUS` outside the US (createParty's is not checked, OBSERVED-MORE).
    if let Some(v) = p.opt(&["primState"])?.filter(|v| !v.trim().is_empty()) {
        r.prim_state = validate::us_state("primState", &v)?;
    }
    if p.opt(&["totalAssets"])?.is_some() {
        r.total_assets = p.int("totalAssets")?;
    }
    if let Some(v) = p.opt(&["tags"])? {
        r.tags = validate::tags(&v)?;
    }
    if let Some(v) = p.opt(&["formationDate"])? {
        r.formation_date = if v.is_empty() {
            v
        } else {
            validate::date("formationDate", &v)?
        };
    }
    Ok(())
}

/// The flag checks of an entity request: its email addresses (`776`).
fn flag_checks(p: &Params) -> Result<Checks, ApiError> {
    Checks::of(p, None, &["emailAddress", "emailAddress2"])
}

/// `PUT /v3/createEntity` (sends no webhook, as part 1 says).
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    require(&p, REQUIRED, true)?;
    let mut entity = Entity {
        created_ip: ctx.ip.to_string(),
        ..Entity::default()
    };
    apply(&p, &mut entity)?;
    let checks = flag_checks(&p)?;
    entity.id = ctx.next_id(shared::ids::ENTITY).await?;
    entity.created = ctx.now();
    entity.updated = entity.created.clone();
    let writes = records::insert(ctx.client_id(), &entity)?;
    ctx.transact(async move |_, _| Ok(checks.onto(Plan::new(writes.clone(), ()))))
        .await?;
    Ok(Reply::ok().with("entityDetails", insert_array(PartyRef { id: &entity.id })))
}

/// `POST /v3/updateEntity`: every createEntity field optional; the ones sent replace the
/// stored values and the whole row is written back (re-applied to a fresh copy after a
/// concurrent change). Answers and sends `partyId`, `KYCstatus`, `AMLstatus`.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let id = p.req(&["partyId"])?;
    require(&p, REQUIRED, false)?;
    apply(&p, &mut Entity::default())?;
    let checks = flag_checks(&p)?;
    crate::support::update(&ctx, p, id, apply, checks, "updateEntity", "entityDetails").await
}

/// A live entity of the caller, or `198`.
pub async fn live_entity(ctx: &Ctx, id: &str) -> Result<records::Stored<Entity>, ApiError> {
    records::live::<Entity>(ctx, id, no_party).await
}

/// `POST /v3/getEntity`: `entityDetails`, an array of the one record (`KYCstatus` casing).
/// Its webhook carries that record.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    crate::support::get::<Entity>(&ctx, &p, "getEntity", "entityDetails").await
}

/// `POST /v3/searchEntity`: live entities whose ID, name, EIN, email addresses or phone
/// numbers contain `searchKeyword` (case-insensitive), newest first.
pub async fn search(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    crate::support::search::<Entity>(&ctx, &p, "entityDetails").await
}

/// `POST /v3/deleteEntity`: a virtual delete; webhook `partyId` (as deleteParty).
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    crate::support::delete_virtually::<Entity>(&ctx, p.req(&["partyId"])?, "deleteEntity").await
}

pub(crate) const LIST: ListSpec = ListSpec::newest_first("partyId").numbers(&["totalAssets"]).texts(&[
    "entityName",
    "entityType",
    "entityDesc",
    "ein",
    "domicile",
    "primAddress1",
    "primAddress2",
    "primCity",
    "primState",
    "primZip",
    "primCountry",
    "emailAddress",
    "emailAddress2",
    "phone",
    "phone2",
    "ownersAI",
    "KYCstatus",
    "AMLstatus",
    "AMLdate",
    "formationDate",
    "tags",
    "notes",
    "partystatus",
]);

/// `GET /v3/entities`: newest first, scope `party.read.pii_high`.
const LIST_OP: Handler = list_op!(Entity, LIST, "entities", |e, _ctx| e.shown());

/// The entity routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("party.read", PiiLevel::High, "party.read.pii_high");
    Routes::new()
        .op("createEntity", op!(create))
        .op("updateEntity", op!(update))
        .op("getEntity", op!(get))
        .op("searchEntity", op!(search))
        .op("deleteEntity", op!(delete))
        .resource(Method::GET, "/v3/entities", READ, LIST_OP)
}
