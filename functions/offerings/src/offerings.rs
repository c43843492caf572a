//! Offerings: createOffering, updateOffering, getOffering, getAllOffers (deprecated),
//! searchOffering and `GET /v3/offerings`.

use http::Method;
use rust_decimal::Decimal;
use serde::Serialize;
use shared::auth::PiiLevel;
use shared::http::router::{Handler, ScopeReq};
use shared::list::ListSpec;
use shared::model::offering::{status, Offering, ISSUE_TYPES};
use shared::model::validate;
use shared::records;
use shared::records::issuer::live_issuer;
use shared::records::offering::{self, attr};
use shared::store::{CmpOp, Cond, Update, Val};
use shared::webhooks::view_event;
use shared::{insert_array, list_op, op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support::{issuer_id, live_offering, offering_id};

/// The fields an offering request may set (field permissions, `110`); `issuerId` names the
/// issuer, as `accountId` names a trade's account: an identifier, not a field.
const FIELDS: &[&str] = &[
    "issueName",
    "issueType",
    "targetAmount",
    "minAmount",
    "maxAmount",
    "unitPrice",
    "totalShares",
    "startDate",
    "endDate",
    "offeringStatus",
    "offeringText",
    "stampingText",
    "field1",
    "field2",
    "field3",
];

/// Most records getAllOffers answers (part 1, Limits).
const ALL_MAX: usize = 10_000;
/// Most records searchOffering answers.
const SEARCH_MAX: usize = 1000;

/// The webhook of getAllOffers and searchOffering: the offerings answered.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OfferingIds {
    offering_ids: String,
}

impl OfferingIds {
    fn of(offerings: &[Offering]) -> OfferingIds {
        let ids: Vec<&str> = offerings.iter().map(|o| o.id.as_str()).collect();
        OfferingIds {
            offering_ids: ids.join(","),
        }
    }
}

/// The amount rules checked on every created or updated offering.
fn check_amounts(o: &Offering) -> Result<(), ApiError> {
    if o.unit_price <= Decimal::ZERO {
        return Err(ApiError::invalid("unitPrice", "must be greater than zero"));
    }
    if o.target_amount > o.max_amount {
        return Err(ApiError::invalid("targetAmount", "must not be above maxAmount"));
    }
    if o.min_amount > o.max_amount {
        return Err(ApiError::invalid("minAmount", "must not be above maxAmount"));
    }
    Ok(())
}

/// `maxAmount / unitPrice` in whole units, at most `validate::MAX_UNITS`.
fn derived_shares(o: &Offering) -> Result<i64, ApiError> {
    Offering::shares_for(o.max_amount, o.unit_price)
        .filter(|n| *n <= validate::MAX_UNITS)
        .ok_or_else(|| ApiError::invalid("unitPrice", "gives more than 1000000000000 shares: send totalShares"))
}

/// `totalShares`, when sent: a whole number of units.
fn explicit_shares(p: &Params) -> Result<Option<i64>, ApiError> {
    match p.opt(&["totalShares"])? {
        Some(v) if !v.trim().is_empty() => validate::units("totalShares", &v).map(Some),
        _ => Ok(None),
    }
}

/// `PUT /v3/createOffering`: status `Pending`; `issueType` stored as sent (not validated);
/// `escrowAccountNumber` ignored (the operator links escrow accounts). `totalShares` is
/// `maxAmount / unitPrice` in whole units unless `totalShares` is sent; `remainingShares`
/// starts equal to it.
pub async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let issuer = issuer_id(&p)?;
    let mut o = Offering {
        issuer_id: issuer.to_string(),
        issue_name: p.req(&["issueName"])?,
        issue_type: p.req(&["issueType"])?,
        target_amount: validate::amount("targetAmount", &p.req(&["targetAmount"])?)?,
        min_amount: validate::amount("minAmount", &p.req(&["minAmount"])?)?,
        max_amount: validate::amount("maxAmount", &p.req(&["maxAmount"])?)?,
        unit_price: validate::amount("unitPrice", &p.req(&["unitPrice"])?)?,
        start_date: validate::date("startDate", &p.req(&["startDate"])?)?,
        end_date: validate::date("endDate", &p.req(&["endDate"])?)?,
        offering_text: p.req(&["offeringText"])?,
        stamping_text: p.req(&["stampingText"])?,
        field1: p.text(&["field1"])?,
        field2: p.text(&["field2"])?,
        field3: p.text(&["field3"])?,
        status: status::PENDING.into(),
        ..Offering::default()
    };
    check_amounts(&o)?;
    let explicit = explicit_shares(&p)?;
    o.total_shares = match explicit {
        Some(n) => n,
        None => derived_shares(&o)?,
    };
    o.remaining_shares = o.total_shares;
    o.created_ip = p
        .opt(&["createIPAddress", "createdIPAddress", "createdIpAddress"])?
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| ctx.ip.to_string());
    live_issuer(ctx.store(), ctx.client_id(), &issuer).await?;
    o.id = ctx.next_id(shared::ids::OFFERING).await?;
    o.created = ctx.now();
    o.updated = o.created.clone();
    let record = o.status_view();
    let event = view_event("createOffering", &record);
    ctx.transact(async move |ctx, _| {
        Ok(Plan::new(offering::insert(ctx.client_id(), &o)?, record.clone()).event(event.clone()))
    })
    .await
    .map(|record| Reply::ok().with("offeringDetails", insert_array(record)))
}

/// A parameter updateOffering may change: `None` when not sent; `106` when sent blank (every
/// such field is required at creation).
fn changed(p: &Params, name: &str) -> Result<Option<String>, ApiError> {
    match p.opt(&[name])? {
        Some(v) if v.trim().is_empty() => Err(ApiError::missing(name)),
        other => Ok(other),
    }
}

/// What an updateOffering request changes, parsed before anything is read.
struct Changes {
    issue_name: Option<String>,
    issue_type: Option<String>,
    target: Option<Decimal>,
    min: Option<Decimal>,
    max: Option<Decimal>,
    unit: Option<Decimal>,
    total: Option<i64>,
    start: Option<String>,
    end: Option<String>,
    status: Option<&'static str>,
    offering_text: Option<String>,
    stamping_text: Option<String>,
    fields: [Option<String>; 3],
}

fn parse_changes(p: &Params) -> Result<Changes, ApiError> {
    let amount = |name: &str| -> Result<Option<Decimal>, ApiError> {
        changed(p, name)?.map(|v| validate::amount(name, &v)).transpose()
    };
    let issue_type = match changed(p, "issueType")? {
        Some(v) if ISSUE_TYPES.iter().any(|t| t.eq_ignore_ascii_case(v.trim())) => Some(v),
        Some(_) => {
            return Err(ApiError::invalid(
                "issueType",
                format!("must be one of {}", ISSUE_TYPES.join(", ")),
            ))
        }
        None => None,
    };
    let status = match changed(p, "offeringStatus")? {
        None => None,
        Some(v) if v.trim().eq_ignore_ascii_case(status::PENDING) => Some(status::PENDING),
        Some(v) if v.trim().eq_ignore_ascii_case(status::DENIED) => Some(status::DENIED),
        Some(v) if v.trim().eq_ignore_ascii_case(status::APPROVED) => {
            return Err(ApiError::invalid(
                "offeringStatus",
                "Approved is set by the operator's approval",
            ))
        }
        Some(_) => {
            return Err(ApiError::invalid(
                "offeringStatus",
                "must be Pending or Denied (closeOffering, cancelOffering, reopenOffering and deleteOffering change the others)",
            ))
        }
    };
    Ok(Changes {
        issue_name: changed(p, "issueName")?,
        issue_type,
        target: amount("targetAmount")?,
        min: amount("minAmount")?,
        max: amount("maxAmount")?,
        unit: amount("unitPrice")?,
        total: explicit_shares(p)?,
        start: changed(p, "startDate")?
            .map(|v| validate::date("startDate", &v))
            .transpose()?,
        end: changed(p, "endDate")?
            .map(|v| validate::date("endDate", &v))
            .transpose()?,
        status,
        offering_text: changed(p, "offeringText")?,
        stamping_text: changed(p, "stampingText")?,
        fields: [p.opt(&["field1"])?, p.opt(&["field2"])?, p.opt(&["field3"])?],
    })
}

impl Changes {
    /// The offering after the changes, or the rule it breaks.
    fn apply(&self, before: &Offering) -> Result<Offering, ApiError> {
        let mut o = before.clone();
        let set = |slot: &mut String, v: &Option<String>| {
            if let Some(v) = v {
                slot.clone_from(v);
            }
        };
        set(&mut o.issue_name, &self.issue_name);
        set(&mut o.issue_type, &self.issue_type);
        set(&mut o.start_date, &self.start);
        set(&mut o.end_date, &self.end);
        set(&mut o.offering_text, &self.offering_text);
        set(&mut o.stamping_text, &self.stamping_text);
        for (slot, v) in [&mut o.field1, &mut o.field2, &mut o.field3]
            .into_iter()
            .zip(&self.fields)
        {
            set(slot, v);
        }
        o.target_amount = self.target.unwrap_or(o.target_amount);
        o.min_amount = self.min.unwrap_or(o.min_amount);
        o.max_amount = self.max.unwrap_or(o.max_amount);
        o.unit_price = self.unit.unwrap_or(o.unit_price);
        check_amounts(&o)?;
        if let Some(s) = self.status {
            if !before.accepts_investments() {
                return Err(ApiError::invalid(
                    "offeringStatus",
                    format!("the offering is {}: reopen it first", before.status),
                ));
            }
            o.status = s.into();
        }
        let pricing_changed = o.max_amount != before.max_amount || o.unit_price != before.unit_price;
        o.total_shares = match self.total {
            Some(n) => n,
            None if pricing_changed => derived_shares(&o)?,
            None => before.total_shares,
        };
        Ok(o)
    }
}

/// `updateOffering` (POST as observed): `offeringId` and any of createOffering's fields,
/// `issueType` checked against Equity, Debt, Hybrid, Fund (any casing), `offeringStatus`
/// `Pending` or `Denied`. `totalShares` follows an explicit `totalShares`, or is derived
/// again when `maxAmount` or `unitPrice` changes; `remainingShares` moves by the same
/// number of units and may not drop below zero (`106`: units already reserved by trades).
/// Answers `offeringDetails` = `[true, [getOffering object]]`; fires `updateOffering`.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let id = offering_id(&p)?;
    let changes = parse_changes(&p)?;
    // The version moved (a concurrent update) or trades reserved the units this change would
    // remove: the next attempt reads again and decides on the fresh copy.
    ctx.transact(async move |ctx, _| {
        let stored = live_offering(&ctx, &id).await?;
        let mut after = changes.apply(&stored.rec)?;
        let delta = after.total_shares - stored.rec.total_shares;
        if stored.rec.remaining_shares + delta < 0 {
            return Err(too_few_shares(&stored.rec));
        }
        after.remaining_shares = stored.rec.remaining_shares + delta;
        after.updated = ctx.now();
        after.updated_ip = ctx.ip.to_string();
        let (ops, cond) = if delta == 0 {
            (Vec::new(), None)
        } else {
            let ops = vec![Update::Add(attr::REMAINING_SHARES.into(), Decimal::from(delta))];
            let cond = (delta < 0).then(|| Cond::Cmp(attr::REMAINING_SHARES.into(), CmpOp::Ge, Val::from(-delta)));
            (ops, cond)
        };
        let writes = offering::update(ctx.client_id(), &stored, &after, ops, cond)?;
        let reply = Reply::ok().with("offeringDetails", insert_array(after.details()));
        Ok(Plan::new(writes, reply).event(view_event("updateOffering", &after.updated_view())))
    })
    .await
}

fn too_few_shares(o: &Offering) -> ApiError {
    ApiError::invalid(
        "totalShares",
        format!(
            "cannot drop below the {} units already reserved by trades",
            o.total_shares - o.remaining_shares
        ),
    )
}

/// `POST /v3/getOffering`: `offeringDetails`, an array of the one offering object
/// (OBSERVED.md), `remainingShares` as it stands.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = offering_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let s = live_offering(&ctx, &id).await?;
        let record = s.rec.details();
        let event = view_event("getOffering", &record);
        Ok(Plan::answer(Reply::ok().with("offeringDetails", [record])).event(event))
    })
    .await
}

/// `POST /v3/getAllOffers` (deprecated; `GET /v3/offerings` replaces it): no parameters;
/// `offeringDetails`, the live offerings newest first, at most 10,000 (part 1, Limits).
pub async fn get_all(ctx: Ctx, _p: Params) -> Result<Reply, ApiError> {
    ctx.transact(async move |ctx, _| {
        let all = records::newest::<Offering>(&ctx, ALL_MAX).await?;
        let event = view_event("getAllOffers", &OfferingIds::of(&all));
        let records: Vec<_> = all.iter().map(Offering::summary).collect();
        Ok(Plan::answer(Reply::ok().with("offeringDetails", records)).event(event))
    })
    .await
}

fn matches(o: &Offering, needle: &str) -> bool {
    [&o.id, &o.issuer_id, &o.issue_name, &o.issue_type, &o.status]
        .iter()
        .any(|v| v.to_lowercase().contains(needle))
}

/// `searchOffering`: `searchKeyword` (required), a case-insensitive part of the offering
/// ID, issuer ID, `issueName`, `issueType` or `offeringStatus`; `offeringDetails`, the
/// matching live offerings as getOffering objects, newest first, at most 1000.
pub async fn search(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let needle = p.req(&["searchKeyword"])?.trim().to_lowercase();
    ctx.transact(async move |ctx, _| {
        let found: Vec<Offering> = records::newest::<Offering>(&ctx, usize::MAX)
            .await?
            .into_iter()
            .filter(|o| matches(o, &needle))
            .take(SEARCH_MAX)
            .collect();
        let event = view_event("searchOffering", &OfferingIds::of(&found));
        let records: Vec<_> = found.iter().map(Offering::details).collect();
        Ok(Plan::answer(Reply::ok().with("offeringDetails", records)).event(event))
    })
    .await
}

const LIST: ListSpec = ListSpec::newest_first("offeringId")
    .ids(&["issuerId"])
    .numbers(&[
        "targetAmount",
        "minAmount",
        "maxAmount",
        "unitPrice",
        "totalShares",
        "remainingShares",
    ])
    .dates(&["startDate", "endDate", "createdDate", "updatedDate"])
    .texts(&[
        "issueName",
        "issueType",
        "offeringStatus",
        "offeringText",
        "stampingText",
        "escrowAccountNumber",
        "field1",
        "field2",
        "field3",
        "createdIPAddress",
        "virtualStatus",
    ]);

/// `GET /v3/offerings`: scope `offering.read` (any PII level: offerings hold no PII),
/// newest first.
const LIST_OP: Handler = list_op!(Offering, LIST, "offerings", |o, _ctx| o.list_view());

/// The offering routes.
pub fn routes() -> Routes {
    const READ: ScopeReq = ScopeReq::new("offering.read", PiiLevel::Low, "offering.read");
    Routes::new()
        .op("createOffering", op!(create))
        .op("updateOffering", op!(update))
        .op("getOffering", op!(get))
        .op("getAllOffers", op!(get_all))
        .op("searchOffering", op!(search))
        .resource(Method::GET, "/v3/offerings", READ, LIST_OP)
}
