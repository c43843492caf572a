//! Suitability: calculateSuitability, getSuitability, updateSuitability, deleteSuitability.
//! One record per account (`shared::model::suitability`); `suitabilityScore` is calculated
//! from the three scores sent.

use serde_json::Value;
use shared::model::account::AccountRef;
use shared::model::suitability::{Suitability, FIELDS};
use shared::model::Account;
use shared::records::{self, Stored};
use shared::store::{Cond, Write};
use shared::webhooks::{record_event, view_event, Event};
use shared::{insert_array, ApiError, Ctx, Params, Plan, Reply};
use shared::{op, Routes};

use crate::accounts::{existing_account, live_account};

/// Scores: numeric format only (part 2); the range 1 to 5 is a convention, not checked.
const SCORES: &[&str] = &["riskProfile", "investmentExperience", "privOffExperience"];
/// Percentages: integers.
const INTEGERS: &[&str] = &[
    "pctPrivSecurities",
    "pctIlliquidSecurities",
    "pctLiquidSecurities",
    "pctRealEstate",
];

/// A decimal number as text: an optional sign, digits, at most one decimal point.
fn is_numeric(v: &str) -> bool {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    let mut parts = digits.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let frac = parts.next();
    let all = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    all(whole) && frac.is_none_or(|f| !f.is_empty() && all(f)) && (!whole.is_empty() || frac.is_some())
}

/// The suitability parameters sent (`None` when absent), checked: scores and `timeHorizon`
/// numeric, percentages integers (`106` otherwise); blank counts as sent empty.
fn sent_fields(p: &Params) -> Result<Vec<(String, Option<String>)>, ApiError> {
    let mut out = Vec::with_capacity(FIELDS.len());
    for name in FIELDS {
        let names: &[&str] = match *name {
            // One reference page spells it `invesmentObjective`.
            "investmentObjective" => &["investmentObjective", "invesmentObjective"],
            _ => std::slice::from_ref(name),
        };
        let v = match p.opt(names)? {
            None => None,
            Some(v) if v.trim().is_empty() => Some(String::new()),
            Some(v) if SCORES.contains(name) || *name == "timeHorizon" => {
                if !is_numeric(v.trim()) {
                    return Err(ApiError::invalid(name, "Numeric values only"));
                }
                Some(v.trim().to_owned())
            }
            Some(_) if INTEGERS.contains(name) => p.int(name)?.map(|n| n.to_string()),
            Some(v) => Some(v),
        };
        out.push(((*name).to_owned(), v));
    }
    Ok(out)
}

/// Sets the fields sent on `s` (the others are kept).
fn set_sent(s: &mut Suitability, sent: &[(String, Option<String>)]) {
    for (name, v) in sent {
        if let (Some(field), Some(v)) = (s.field_mut(name), v) {
            field.clone_from(v);
        }
    }
}

/// The caller's live suitability record of an account, or body statusCode `404`.
async fn live_suitability(ctx: &Ctx, account: &str) -> Result<Stored<Suitability>, ApiError> {
    match records::load::<Suitability>(ctx.store(), ctx.client_id(), account).await? {
        Some(s) if !s.rec.deleted => Ok(s),
        _ => Err(ApiError::coded("404", "Suitability does not exist for this account")),
    }
}

/// The account check that goes into a suitability write: still live (`gsi1pk` marks it).
fn account_still_live(ctx: &Ctx, account: &str) -> Write {
    Write::Check {
        key: records::key::<Account>(ctx.client_id(), account),
        cond: Cond::AttrExists("gsi1pk".into()),
    }
}

fn suitability_event(method: &str, s: &Suitability) -> Event {
    record_event(method, &s.view())
}

/// `PUT /v3/calculateSuitability`: `accountId` required; calculates and stores the account's
/// suitability from the parameters sent (a new calculation replaces the previous one whole).
/// Answers the insert-array `accountDetails` = `[true, [<suitability record>]]`.
pub async fn calculate(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let account = p.req(&["accountId"])?;
    let sent = sent_fields(&p)?;
    ctx.transact(async move |ctx, _| {
        let a = live_account(&ctx, &account).await?.rec;
        let before = records::load::<Suitability>(ctx.store(), ctx.client_id(), &a.id).await?;
        let now = ctx.now();
        let mut s = Suitability {
            id: a.id.clone(),
            created: now.clone(),
            updated: now,
            ..Suitability::default()
        };
        if let Some(b) = before.as_ref().filter(|b| !b.rec.deleted) {
            s.created = b.rec.created.clone();
        }
        set_sent(&mut s, &sent);
        s.calculate_score();
        let mut writes = match &before {
            Some(b) => records::replace(ctx.client_id(), b, &s)?,
            None => records::insert(ctx.client_id(), &s)?,
        };
        writes.push(account_still_live(&ctx, &a.id));
        let reply = Reply::ok().with_value("accountDetails", insert_array(s.view()));
        Ok(Plan::new(writes, reply).event(suitability_event("calculateSuitability", &s)))
    })
    .await
}

/// `POST /v3/getSuitability`: `accountDetails`, one object holding the suitability record;
/// body statusCode `404` when the account has none.
pub async fn get(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    let a = existing_account(&ctx, &account).await?.rec;
    let s = live_suitability(&ctx, &a.id).await?.rec;
    let event = suitability_event("getSuitability", &s);
    ctx.transact(async move |_, _| Ok(Plan::answer(()).event(event.clone())))
        .await?;
    Ok(Reply::ok().with_value("accountDetails", Value::Object(s.view())))
}

/// `PUT /v3/updateSuitability`: the fields sent replace the stored ones (others are kept),
/// the score is calculated again; `accountDetails` holds the updated record.
pub async fn update(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    ctx.check_fields(&p, FIELDS)?;
    let account = p.req(&["accountId"])?;
    let sent = sent_fields(&p)?;
    ctx.transact(async move |ctx, _| {
        let a = live_account(&ctx, &account).await?.rec;
        let before = live_suitability(&ctx, &a.id).await?;
        let mut s = before.rec.clone();
        set_sent(&mut s, &sent);
        s.calculate_score();
        s.updated = ctx.now();
        let mut writes = records::replace(ctx.client_id(), &before, &s)?;
        writes.push(account_still_live(&ctx, &a.id));
        let reply = Reply::ok().with_value("accountDetails", Value::Object(s.view()));
        Ok(Plan::new(writes, reply).event(suitability_event("updateSuitability", &s)))
    })
    .await
}

/// `POST /v3/deleteSuitability`: a virtual delete; envelope only; webhook `accountId`.
pub async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let account = p.req(&["accountId"])?;
    ctx.transact(async move |ctx, _| {
        let a = live_account(&ctx, &account).await?.rec;
        let before = live_suitability(&ctx, &a.id).await?;
        let mut s = before.rec.clone();
        s.deleted = true;
        s.updated = ctx.now();
        let event = view_event("deleteSuitability", &AccountRef { id: &a.id });
        Ok(Plan::new(records::replace(ctx.client_id(), &before, &s)?, Reply::ok()).event(event))
    })
    .await
}

/// The suitability routes.
pub fn routes() -> Routes {
    Routes::new()
        .op("calculateSuitability", op!(calculate))
        .op("getSuitability", op!(get))
        .op("updateSuitability", op!(update))
        .op("deleteSuitability", op!(delete))
}
