//! Individual parties: createParty, updateParty, getParty, searchParty, getAllParties,
//! deleteParty, `GET /v3/parties`, `GET /v3/parties/{partyId}`.

use http::Method;
use serde_json::{Map, Value};
use shared::auth::PiiLevel;
use shared::http::router::ScopeReq;
use shared::list::ListSpec;
use shared::model::ids::no_party;
use shared::model::party::{PartyRecord, Setter};
use shared::model::validate;
use shared::model::{Entity, Party};
use shared::records;
use shared::webhooks::view_event;
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};
use shared::{op, Routes};

use crate::support::{all, apply_texts, flag_param, int_at_least, require, Checks};

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

/// createParty's required parameters (the first of [`FIELDS`]), in the order `106` reports
/// them.
const REQUIRED: &[&str] = FIELDS.split_at(9).0;

/// The free-text parameters only individual parties take, and where each is stored.
const TEXT: &[Setter<Party>] = &[
    ("firstName", |r, v| r.first_name = v),
    ("lastName", |r, v| r.last_name = v),
    ("middleInitial", |r, v| r.middle_initial = v),
    ("occupation", |r, v| r.occupation = v),
    ("associatedPerson", |r, v| r.associated_person = v),
    ("empCountry", |r, v| r.emp_country = v),
    ("empAddress1", |r, v| r.emp_address1 = v),
    ("empAddress2", |r, v| r.emp_address2 = v),
    ("empCity", |r, v| r.emp_city = v),
    ("empState", |r, v| r.emp_state = v),
    ("empZip", |r, v| r.emp_zip = v),
    ("empName", |r, v| r.emp_name = v),
    ("empStatus", |r, v| r.emp_status = v),
    ("field1", |r, v| r.field1 = v),
    ("field2", |r, v| r.field2 = v),
    ("field3", |r, v| r.field3 = v),
    ("invest_to", |r, v| r.invest_to = v),
];

type IntSetter = fn(&mut Party, Option<i64>);

/// The integer parameters (blank clears).
const INTS: &[(&str, IntSetter)] = &[
    ("currentAnnIncome", |r, v| r.current_ann_income = v),
    ("avgAnnIncome", |r, v| r.avg_ann_income = v),
    ("currentHouseholdIncome", |r, v| r.current_household_income = v),
    ("avgHouseholdIncome", |r, v| r.avg_household_income = v),
    ("householdNetworth", |r, v| r.household_networth = v),
];

fn is_non_resident(domicile: &str) -> bool {
    domicile.trim().eq_ignore_ascii_case("non-resident")
}

/// `106` for a required parameter that is blank, or absent when `creating`. `primState`
/// is left to [`require_state`] on updates (it depends on the stored `domicile`).
fn require_params(p: &Params, creating: bool) -> Result<(), ApiError> {
    let state_elsewhere = is_non_resident(&p.text(&["domicile"])?) || !creating;
    let names = REQUIRED
        .iter()
        .filter(|name| !(**name == "primState" && state_elsewhere));
    require(p, names, creating)
}

/// `primState` is required unless the party is a non-resident.
fn require_state(r: &Party) -> Result<(), ApiError> {
    if r.prim_state.trim().is_empty() && !is_non_resident(&r.domicile) {
        return Err(ApiError::missing("primState"));
    }
    Ok(())
}

/// Sets every parameter the request sends (and only those), checking formats (`106`).
fn apply(p: &Params, r: &mut Party) -> Result<(), ApiError> {
    apply_texts(p, r, TEXT)?;
    if let Some(v) = p.opt(&["dob"])? {
        r.dob = validate::date("dob", &v)?;
    }
    if let Some(v) = p.opt(&["socialSecurityNumber"])? {
        r.ssn = if v.is_empty() { v } else { validate::ssn(&v)? };
    }
    if let Some(v) = p.opt(&["tags"])? {
        r.tags = validate::tags(&v)?;
    }
    for (name, set) in INTS {
        if p.opt(&[name])?.is_some() {
            set(r, p.int(name)?);
        }
    }
    Ok(())
}

/// The flag checks of a party request: its SSN (`775`) and email addresses (`776`).
fn flag_checks(p: &Params) -> Result<Checks, ApiError> {
    Checks::of(p, Some("socialSecurityNumber"), &["emailAddress", "emailAddress2"])
}

/// The answer of createParty and updateParty: their status record.
fn status_reply(r: &Party) -> Reply {
    Reply::ok().with("partyDetails", insert_array(r.status_view()))
}

/// `PUT /v3/createParty`.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    require_params(&p, true)?;
    let mut party = Party {
        esign_status: "NOTSIGNED".into(),
        created_ip: ctx.ip.to_string(),
        ..Party::default()
    };
    apply(&p, &mut party)?;
    let checks = flag_checks(&p)?;
    party.id = ctx.next_id(shared::ids::PARTY).await?;
    party.created = ctx.now();
    party.updated = party.created.clone();
    let event = view_event("createParty", &party.status_view());
    let writes = records::insert(ctx.client_id(), &party)?;
    ctx.transact(async move |_, _| Ok(checks.onto(Plan::new(writes.clone(), ()).event(event.clone()))))
        .await?;
    Ok(status_reply(&party))
}

/// `POST /v3/updateParty`: every createParty field optional; the ones sent replace the
/// stored values and the whole row is written back. A concurrent change of the same party
/// makes the write fail its version check: the request is then applied to the fresh copy.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let id = p.req(&["partyId"])?;
    require_params(&p, false)?;
    apply(&p, &mut Party::default())?;
    let checks = flag_checks(&p)?;
    let apply_complete = |p: &Params, r: &mut Party| {
        apply(p, r)?;
        require_state(r)
    };
    crate::support::update(&ctx, p, id, apply_complete, checks, "updateParty", "partyDetails").await
}

/// A live individual party of the caller, or `198`.
pub async fn live_party(ctx: &Ctx, id: &str) -> Result<records::Stored<Party>, ApiError> {
    records::live::<Party>(ctx, id, no_party).await
}

/// `POST /v3/getParty`: `partyDetails`, an array of the one record (`kycStatus` casing,
/// SSN and DOB `REDACTED`). Its webhook carries that record.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    crate::support::get::<Party>(&ctx, &p, "getParty", "partyDetails").await
}

/// `POST /v3/searchParty`: live individual parties whose ID, names, email addresses or
/// phone numbers contain `searchKeyword` (case-insensitive), newest first.
pub async fn search(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    crate::support::search::<Party>(&ctx, &p, "partyDetails").await
}

/// `POST /v3/getAllParties` (deprecated): individuals and entities together, newest first,
/// archived ones included (`partystatus`); `offset`, `limit` and `deleted` optional.
pub async fn get_all(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let offset = int_at_least(&p, "offset", 0)?.unwrap_or(0);
    let limit = int_at_least(&p, "limit", 1)?.unwrap_or(usize::MAX);
    let deleted = flag_param(&p, "deleted")?;
    let mut rows: Vec<(String, Map<String, Value>)> = Vec::new();
    for r in all::<Party>(&ctx).await? {
        if deleted || !r.deleted {
            rows.push((records::list_sort_key(&r.created, &r.id), r.view(PiiLevel::High)));
        }
    }
    for r in all::<Entity>(&ctx).await? {
        if deleted || !r.deleted {
            rows.push((records::list_sort_key(&r.created, &r.id), r.view()));
        }
    }
    rows.sort_by(|a, b| b.0.cmp(&a.0));
    let rows: Vec<Map<String, Value>> = rows.into_iter().skip(offset).take(limit).map(|(_, m)| m).collect();
    let ids = rows.iter().filter_map(|m| m.get("partyId").and_then(Value::as_str));
    crate::support::fire_party_ids(&ctx, ids).await?;
    let records = rows.into_iter().map(Value::Object).collect();
    Ok(Reply::ok().with_value("partyDetails", Value::Array(records)))
}

/// `POST /v3/deleteParty`: a virtual delete.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    crate::support::delete_virtually::<Party>(&ctx, p.req(&["partyId"])?, "deleteParty").await
}

/// The list engine's view of party records.
const LIST: ListSpec = ListSpec::newest_first("partyId")
    .numbers(&[
        "currentAnnIncome",
        "avgAnnIncome",
        "currentHouseholdIncome",
        "avgHouseholdIncome",
        "householdNetworth",
    ])
    .texts(&[
        "firstName",
        "middleInitial",
        "lastName",
        "domicile",
        "socialSecurityNumber",
        "dob",
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
        "occupation",
        "associatedPerson",
        "empAddress1",
        "empAddress2",
        "empCity",
        "empState",
        "empZip",
        "empCountry",
        "empName",
        "empStatus",
        "invest_to",
        "kycStatus",
        "amlStatus",
        "amlDate",
        "tags",
        "notes",
        "esignStatus",
        "documentKey",
        "field1",
        "field2",
        "field3",
        "partystatus",
    ]);

/// `GET /v3/parties`: individual parties, newest first. `type`, as the incumbent's clients send
/// it (OBSERVED-MORE): `individual` (the default) or `entity`, the entities under the same key
/// with `GET /v3/entities`'s scope (`party.read.pii_high`); another value is HTTP 422 `1422`
/// with an empty array.
async fn list(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let pairs = p.query_pairs();
    let kind = pairs.iter().rev().find(|(k, _)| k == "type").map(|(_, v)| v.trim());
    match kind.map(str::to_ascii_lowercase).as_deref() {
        None | Some("" | "individual") => {
            records::list::<Party>(&ctx, pairs, &LIST, "parties", |r, _| records::raw(&r.shown(ctx.pii))).await
        }
        Some("entity") if ctx.pii >= PiiLevel::High => {
            records::list::<Entity>(&ctx, pairs, &crate::entities::LIST, "parties", |e, _| {
                records::raw(&e.shown())
            })
            .await
        }
        Some("entity") => Err(ApiError::ScopeMissing("party.read.pii_high")),
        Some(_) => Err(records::empty_list_refusal(
            "parties",
            "1422",
            422,
            "type must be individual or entity".into(),
        )),
    }
}

/// `GET /v3/parties/{partyId}`: one party, `1404` when unknown or deleted.
pub async fn read(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = p.req(&["partyId"])?;
    let s = records::live::<Party>(&ctx, &id, || ApiError::not_found(format!("Party {id} not found"))).await?;
    Ok(Reply::ok().with("party", s.rec.view(ctx.pii)))
}

/// The individual parties routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("party.read", PiiLevel::Low, "party.read");
    Routes::new()
        .op("createParty", op!(create))
        .op("updateParty", op!(update))
        .op("getParty", op!(get))
        .op("searchParty", op!(search))
        .op("getAllParties", op!(get_all))
        .op("deleteParty", op!(delete))
        .resource(Method::GET, "/v3/parties", READ, op!(list))
        .resource(Method::GET, "/v3/parties/{partyId}", READ, op!(read))
}
