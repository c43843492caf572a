//! Issuers: createIssuer, updateIssuer, getIssuer, deleteIssuer, getAllIssuers (deprecated)
//! and `GET /v3/issuers`.

use http::Method;
use serde::Serialize;
use shared::auth::PiiLevel;
use shared::http::router::{Handler, ScopeReq};
use shared::list::ListSpec;
use shared::model::ids::IssuerId;
use shared::model::issuer::{Issuer, IssuerAccount};
use shared::model::Stamps;
use shared::records;
use shared::records::issuer::live_issuer;
use shared::webhooks::view_event;
use shared::{insert_array, list_op, op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{issuer_id, required_if_permitted};

/// The fields an issuer request may set (field permissions, `110`).
const FIELDS: &[&str] = &[
    "issuerName",
    "firstName",
    "lastName",
    "email",
    "phoneNumber",
    "issuerStatus",
    "field1",
];

/// The createIssuer parameters part 2 marks required.
const REQUIRED: &[&str] = &["issuerName", "firstName", "lastName", "email"];

/// Most records getAllIssuers answers (as getAllOffers).
const ALL_MAX: usize = 10_000;

/// The getAllIssuers webhook: the issuers answered.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IssuerIds {
    issuer_ids: String,
}

/// The deleteIssuer webhook.
#[derive(Serialize)]
struct IssuerRef<'a> {
    #[serde(rename = "issuerId")]
    issuer_id: &'a str,
}

/// `phoneNumber` (an integer in part 2): digits, stored as text; blank counts as absent.
fn phone(p: &Params) -> Result<Option<Option<String>>, ApiError> {
    match p.opt(&["phoneNumber"])? {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(Some(None)),
        Some(v) if v.trim().bytes().all(|b| b.is_ascii_digit()) => Ok(Some(Some(v.trim().to_owned()))),
        Some(_) => Err(ApiError::invalid("phoneNumber", "Numeric values only")),
    }
}

/// `PUT /v3/createIssuer`: status `Pending`; required fields follow the field-permission rule.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let mut req = Vec::with_capacity(REQUIRED.len());
    for name in REQUIRED {
        req.push(required_if_permitted(&ctx, &p, &[name])?);
    }
    let [issuer_name, first_name, last_name, email] =
        <[String; 4]>::try_from(req).map_err(|_| ApiError::internal("four required issuer fields"))?;
    let phone_number = phone(&p)?.flatten();
    let created_ip = p
        .opt(&["createdIpAddress", "createdIPAddress"])?
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| ctx.ip.to_string());
    let now = ctx.now();
    let issuer = Issuer {
        id: ctx.next_id(shared::ids::ISSUER).await?,
        issuer_name,
        first_name,
        last_name,
        email,
        phone_number,
        issuer_status: "Pending".into(),
        field1: p.text(&["field1"])?,
        deleted: false,
        stamps: Stamps::created(now, created_ip),
    };
    let record = issuer.status_view();
    let event = view_event("createIssuer", &record);
    ctx.transact(async move |ctx, _| {
        Ok(Plan::new(records::insert(ctx.client_id(), &issuer)?, record.clone()).event(event.clone()))
    })
    .await
    .map(|record| Reply::ok().with("issuerDetails", insert_array(record)))
}

/// `updateIssuer`: `issuerId` and any of the createIssuer fields, `issuerStatus` (free
/// text) and `field1`; the ones sent replace the stored values. Answers exactly
/// `[true, [{issuerId, issuerStatus}]]` (as observed).
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let mut sent = Vec::new();
    for name in REQUIRED {
        let v = p.opt(&[name])?;
        if v.as_deref().is_some_and(|v| v.trim().is_empty()) && ctx.client.may_set(name) {
            return Err(ApiError::missing(name));
        }
        sent.push(v);
    }
    let phone_number = phone(&p)?;
    let status = p.opt(&["issuerStatus"])?;
    let field1 = p.opt(&["field1"])?;
    // A malformed ID is `136` here, as the incumbent answers updateIssuer.
    let id = IssuerId::param(&p, &[IssuerId::PARAM])?;
    ctx.transact(async move |ctx, _| {
        let stored = live_issuer(ctx.store(), ctx.client_id(), &id).await?;
        let mut after = stored.rec.clone();
        let fields = [
            &mut after.issuer_name,
            &mut after.first_name,
            &mut after.last_name,
            &mut after.email,
        ];
        for (slot, v) in fields.into_iter().zip(&sent) {
            if let Some(v) = v {
                slot.clone_from(v);
            }
        }
        if let Some(v) = &phone_number {
            after.phone_number.clone_from(v);
        }
        if let Some(v) = &status {
            after.issuer_status.clone_from(v);
        }
        if let Some(v) = &field1 {
            after.field1.clone_from(v);
        }
        after.stamps.change(ctx.now(), ctx.ip.to_string());
        let record = after.status_view();
        let event = view_event("updateIssuer", &record);
        let reply = Reply::ok().with("issuerDetails", insert_array(record));
        Ok(Plan::new(records::replace(ctx.client_id(), &stored, &after)?, reply).event(event))
    })
    .await
}

/// `POST /v3/getIssuer`: `issuerDetails`, an array of the one issuer record; `106` when
/// `issuerId` is missing or not numeric, `136` when unknown.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = issuer_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_issuer(ctx.store(), ctx.client_id(), &id).await?;
        let record = s.rec.view();
        let event = view_event("getIssuer", &record);
        Ok(Plan::answer(Reply::ok().with("issuerDetails", [record])).event(event))
    })
    .await
}

/// `POST /v3/deleteIssuer`: a virtual delete, with the issuer's financial account (so that
/// a live account always has a live issuer). The issuer's offerings stay as they are.
/// `issuerId` as getIssuer's.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = issuer_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let stored = live_issuer(ctx.store(), ctx.client_id(), &id).await?;
        let mut after = stored.rec.clone();
        after.deleted = true;
        after.stamps.change(ctx.now(), ctx.ip.to_string());
        let mut writes = records::replace(ctx.client_id(), &stored, &after)?;
        if let Some(account) = records::load::<IssuerAccount>(ctx.store(), ctx.client_id(), &after.id).await? {
            if !account.rec.deleted {
                let mut gone = account.rec.clone();
                gone.deleted = true;
                gone.updated.clone_from(&after.stamps.updated);
                writes.extend(records::replace(ctx.client_id(), &account, &gone)?);
            }
        }
        let event = view_event("deleteIssuer", &IssuerRef { issuer_id: &after.id });
        Ok(Plan::new(writes, Reply::ok().desc("Issuer deleted successfully!")).event(event))
    })
    .await
}

/// `POST /v3/getAllIssuers` (deprecated; `GET /v3/issuers` replaces it): no parameters;
/// `issuerDetails`, the live issuers newest first, at most 10,000.
pub async fn get_all(ctx: Ctx, _p: Params) -> Result<Reply, ApiError> {
    ctx.transact(async move |ctx, _| {
        let issuers = records::newest::<Issuer>(&ctx, ALL_MAX).await?;
        let ids: Vec<&str> = issuers.iter().map(|i| i.id.as_str()).collect();
        let event = view_event(
            "getAllIssuers",
            &IssuerIds {
                issuer_ids: ids.join(","),
            },
        );
        let records: Vec<_> = issuers.iter().map(Issuer::view).collect();
        Ok(Plan::answer(Reply::ok().with("issuerDetails", records)).event(event))
    })
    .await
}

const LIST: ListSpec = ListSpec::newest_first("issuerId").texts(&[
    "issuerName",
    "firstName",
    "lastName",
    "email",
    "phoneNumber",
    "issuerStatus",
]);

/// `GET /v3/issuers`: scope `issuer.read.pii_medium` (or higher), newest first.
const LIST_OP: Handler = list_op!(Issuer, LIST, "issuers", |i, _ctx| i.list_view());

/// The issuer routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("issuer.read", PiiLevel::Medium, "issuer.read.pii_medium");
    Routes::new()
        .op("createIssuer", op!(create))
        .op("updateIssuer", op!(update))
        .op("getIssuer", op!(get))
        .op("deleteIssuer", op!(delete))
        .op("getAllIssuers", op!(get_all))
        .resource(Method::GET, "/v3/issuers", READ, LIST_OP)
}
