//! Individual parties: createParty, deleteParty, `GET /v3/parties`, `GET /v3/parties/{partyId}`.

use http::Method;
use serde_json::json;
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::list::{field as f, Dir, FieldKind, ListSpec};
use shared::model::validate;
use shared::model::Party;
use shared::records::{self, Record};
use shared::webhooks::Event;
use shared::{insert_array, ApiError, Ctx, Params, Reply};
use shared::{op, Routes};

/// Parameters createParty takes (and the field permissions they need).
const FIELDS: &[&str] = &[
    "firstName",
    "lastName",
    "dob",
    "primCountry",
    "primAddress1",
    "primCity",
    "primState",
    "primZip",
    "emailAddress",
    "domicile",
    "middleInitial",
    "socialSecurityNumber",
    "primAddress2",
    "emailAddress2",
    "phone",
    "phone2",
    "occupation",
    "associatedPerson",
    "empCountry",
    "empAddress1",
    "empAddress2",
    "empCity",
    "empState",
    "empZip",
    "empName",
    "empStatus",
    "KYCstatus",
    "AMLstatus",
    "AMLdate",
    "tags",
    "notes",
    "field1",
    "field2",
    "field3",
    "currentAnnIncome",
    "avgAnnIncome",
    "currentHouseholdIncome",
    "avgHouseholdIncome",
    "householdNetworth",
    "invest_to",
];

fn is_non_resident(domicile: &str) -> bool {
    domicile.trim().eq_ignore_ascii_case("non-resident")
}

/// `PUT /v3/createParty`.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let domicile = p.text(&["domicile"])?;
    let mut party = Party {
        first_name: p.req(&["firstName"])?,
        last_name: p.req(&["lastName"])?,
        dob: validate::date("dob", &p.req(&["dob"])?)?,
        prim_country: p.req(&["primCountry"])?,
        prim_address1: p.req(&["primAddress1"])?,
        prim_city: p.req(&["primCity"])?,
        prim_state: if is_non_resident(&domicile) {
            p.text(&["primState"])?
        } else {
            p.req(&["primState"])?
        },
        prim_zip: p.req(&["primZip"])?,
        email: p.req(&["emailAddress"])?,
        domicile,
        middle_initial: p.text(&["middleInitial"])?,
        ssn: match p.opt(&["socialSecurityNumber"])?.filter(|s| !s.is_empty()) {
            Some(s) => validate::ssn(&s)?,
            None => String::new(),
        },
        prim_address2: p.text(&["primAddress2"])?,
        email2: p.text(&["emailAddress2"])?,
        phone: p.text(&["phone"])?,
        phone2: p.text(&["phone2"])?,
        occupation: p.text(&["occupation"])?,
        associated_person: p.text(&["associatedPerson"])?,
        emp_country: p.text(&["empCountry"])?,
        emp_address1: p.text(&["empAddress1"])?,
        emp_address2: p.text(&["empAddress2"])?,
        emp_city: p.text(&["empCity"])?,
        emp_state: p.text(&["empState"])?,
        emp_zip: p.text(&["empZip"])?,
        emp_name: p.text(&["empName"])?,
        emp_status: p.text(&["empStatus"])?,
        kyc_status: p.text(&["KYCstatus"])?,
        aml_status: p.text(&["AMLstatus"])?,
        aml_date: p.text(&["AMLdate"])?,
        tags: validate::tags(&p.text(&["tags"])?)?,
        notes: p.text(&["notes"])?,
        field1: p.text(&["field1"])?,
        field2: p.text(&["field2"])?,
        field3: p.text(&["field3"])?,
        current_ann_income: p.int("currentAnnIncome")?,
        avg_ann_income: p.int("avgAnnIncome")?,
        current_household_income: p.int("currentHouseholdIncome")?,
        avg_household_income: p.int("avgHouseholdIncome")?,
        household_networth: p.int("householdNetworth")?,
        invest_to: p.text(&["invest_to"])?,
        esign_status: "NOTSIGNED".into(),
        created_ip: ctx.ip.to_string(),
        ..Party::default()
    };
    party.id = ctx.next_id(shared::ids::PARTY).await?;
    party.created = ctx.now();
    party.updated = party.created.clone();
    let event = Event::new("createParty")
        .field("partyId", party.id.clone())
        .field("KYCstatus", party.kyc_status.clone())
        .field("AMLstatus", party.aml_status.clone());
    ctx.commit(records::insert(ctx.client_id(), &party)?, vec![event])
        .await?;
    let record = json!({"partyId": party.id, "KYCstatus": party.kyc_status, "AMLstatus": party.aml_status});
    Ok(Reply::ok().with("partyDetails", insert_array(record)))
}

/// A live individual party of the caller, or `198`.
pub async fn live_party(ctx: &Ctx, id: &str) -> Result<records::Stored<Party>, ApiError> {
    match records::load::<Party>(ctx.store(), ctx.client_id(), id).await? {
        Some(s) if !s.rec.deleted() => Ok(s),
        _ => Err(ApiError::coded("198", "Party does not exist")),
    }
}

/// `POST /v3/deleteParty`: a virtual delete.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let stored = live_party(&ctx, &id).await?;
    let mut party = stored.rec.clone();
    party.deleted = true;
    party.updated = ctx.now();
    let event = Event::new("deleteParty").field("partyId", id);
    ctx.commit(records::replace(ctx.client_id(), &stored, &party)?, vec![event])
        .await?;
    Ok(Reply::ok().desc("Party deleted successfully!"))
}

/// The list engine's view of party records.
const LIST: ListSpec = ListSpec {
    fields: &[
        f("partyId", FieldKind::Id),
        f("firstName", FieldKind::Text),
        f("middleInitial", FieldKind::Text),
        f("lastName", FieldKind::Text),
        f("domicile", FieldKind::Text),
        f("socialSecurityNumber", FieldKind::Text),
        f("dob", FieldKind::Text),
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
        f("occupation", FieldKind::Text),
        f("associatedPerson", FieldKind::Text),
        f("empAddress1", FieldKind::Text),
        f("empAddress2", FieldKind::Text),
        f("empCity", FieldKind::Text),
        f("empState", FieldKind::Text),
        f("empZip", FieldKind::Text),
        f("empCountry", FieldKind::Text),
        f("empName", FieldKind::Text),
        f("empStatus", FieldKind::Text),
        f("invest_to", FieldKind::Text),
        f("currentAnnIncome", FieldKind::Number),
        f("avgAnnIncome", FieldKind::Number),
        f("currentHouseholdIncome", FieldKind::Number),
        f("avgHouseholdIncome", FieldKind::Number),
        f("householdNetworth", FieldKind::Number),
        f("kycStatus", FieldKind::Text),
        f("amlStatus", FieldKind::Text),
        f("amlDate", FieldKind::Text),
        f("tags", FieldKind::Text),
        f("notes", FieldKind::Text),
        f("esignStatus", FieldKind::Text),
        f("documentKey", FieldKind::Text),
        f("field1", FieldKind::Text),
        f("field2", FieldKind::Text),
        f("field3", FieldKind::Text),
        f("partystatus", FieldKind::Text),
        f("createdDate", FieldKind::Date),
        f("updatedDate", FieldKind::Date),
    ],
    id_field: "partyId",
    default_sort: ("createdDate", Dir::Desc),
    equality_only: false,
    sort_fallback: false,
};

/// `GET /v3/parties`: individual parties, newest first.
pub async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let q = shared::list::parse(p.query_pairs(), &LIST)?;
    let page = records::list::<Party>(ctx.store(), ctx.client_id(), &q, |r| r.view(ctx.pii)).await?;
    Ok(page.into_reply("parties"))
}

/// `GET /v3/parties/{partyId}`: one party, `1404` when unknown or deleted.
pub async fn read(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    match records::load::<Party>(ctx.store(), ctx.client_id(), &id).await? {
        Some(s) if !s.rec.deleted() => Ok(Reply::ok().with("party", s.rec.view(ctx.pii))),
        _ => Err(ApiError::not_found(format!("Party {id} not found"))),
    }
}

/// The individual parties routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq {
        family: "party.read",
        min: PiiLevel::Low,
        name: "party.read",
    };
    Routes::new()
        .op("createParty", op!(create))
        .op("deleteParty", op!(delete))
        .resource(Method::GET, "/v3/parties", READ, op!(list))
        .resource(Method::GET, "/v3/parties/{partyId}", READ, op!(read))
}
