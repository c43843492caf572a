//! Entity parties: createEntity and `GET /v3/entities`.

use http::Method;
use serde_json::json;
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::list::{field as f, Dir, FieldKind, ListSpec};
use shared::model::{validate, Entity};
use shared::records;
use shared::{insert_array, ApiError, Ctx, Params, Reply};
use shared::{op, Routes};

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

/// `PUT /v3/createEntity` (sends no webhook, as part 1 says).
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let mut entity = Entity {
        entity_name: p.req(&["entityName"])?,
        prim_country: p.req(&["primCountry"])?,
        prim_address1: p.req(&["primAddress1"])?,
        prim_city: p.req(&["primCity"])?,
        prim_state: p.req(&["primState"])?,
        prim_zip: p.req(&["primZip"])?,
        email: p.req(&["emailAddress"])?,
        domicile: p.text(&["domicile"])?,
        entity_type: p.text(&["entityType"])?,
        entity_desc: p.text(&["entityDesc"])?,
        ein: p.text(&["ein"])?,
        prim_address2: p.text(&["primAddress2"])?,
        email2: p.text(&["emailAddress2"])?,
        phone: p.text(&["phone"])?,
        phone2: p.text(&["phone2"])?,
        notes: p.text(&["notes"])?,
        total_assets: p.int("totalAssets")?,
        owners_ai: p.text(&["ownersAI"])?,
        kyc_status: p.text(&["KYCstatus"])?,
        aml_status: p.text(&["AMLstatus"])?,
        aml_date: p.text(&["AMLdate"])?,
        tags: validate::tags(&p.text(&["tags"])?)?,
        formation_date: match p.opt(&["formationDate"])?.filter(|d| !d.is_empty()) {
            Some(d) => validate::date("formationDate", &d)?,
            None => String::new(),
        },
        created_ip: ctx.ip.to_string(),
        ..Entity::default()
    };
    entity.id = ctx.next_id(shared::ids::ENTITY).await?;
    entity.created = ctx.now();
    entity.updated = entity.created.clone();
    ctx.commit(records::insert(ctx.client_id(), &entity)?, Vec::new())
        .await?;
    Ok(Reply::ok().with("entityDetails", insert_array(json!({"partyId": entity.id}))))
}

const LIST: ListSpec = ListSpec {
    fields: &[
        f("partyId", FieldKind::Id),
        f("entityName", FieldKind::Text),
        f("entityType", FieldKind::Text),
        f("entityDesc", FieldKind::Text),
        f("ein", FieldKind::Text),
        f("domicile", FieldKind::Text),
        f("primAddress1", FieldKind::Text),
        f("primAddress2", FieldKind::Text),
        f("primCity", FieldKind::Text),
        f("primState", FieldKind::Text),
        f("primZip", FieldKind::Text),
        f("primCountry", FieldKind::Text),
        f("emailAddress", FieldKind::Text),
        f("emailAddress2", FieldKind::Text),
        f("phone", FieldKind::Text),
        f("phone2", FieldKind::Text),
        f("totalAssets", FieldKind::Number),
        f("ownersAI", FieldKind::Text),
        f("KYCstatus", FieldKind::Text),
        f("AMLstatus", FieldKind::Text),
        f("AMLdate", FieldKind::Text),
        f("formationDate", FieldKind::Text),
        f("tags", FieldKind::Text),
        f("notes", FieldKind::Text),
        f("partystatus", FieldKind::Text),
        f("createdDate", FieldKind::Date),
        f("updatedDate", FieldKind::Date),
    ],
    id_field: "partyId",
    default_sort: ("createdDate", Dir::Desc),
    equality_only: false,
    sort_fallback: false,
};

/// `GET /v3/entities`: newest first, scope `party.read.pii_high`.
pub async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let q = shared::list::parse(p.query_pairs(), &LIST)?;
    let page = records::list::<Entity>(ctx.store(), ctx.client_id(), &q, Entity::view).await?;
    Ok(page.into_reply("entities"))
}

/// The entity routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq {
        family: "party.read",
        min: PiiLevel::High,
        name: "party.read.pii_high",
    };
    Routes::new()
        .op("createEntity", op!(create))
        .resource(Method::GET, "/v3/entities", READ, op!(list))
}
