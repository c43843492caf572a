//! ATS market hours (CONTRACT, "ATS", "Calendar"): a security's own Monday-Friday hours
//! (createSecurityMarketHours, deleteSecurityMarketHours), the client's global week as the
//! client reads it (getMarketHours for the weekdays, getMarketHolidays for the weekend), the
//! operator's `PUT .../market-hours` that sets it and its read of a security's hours.

use std::ops::Range;

use http::Method;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::model::ats::invalid;
use shared::model::market_hours::{hhmm, minutes, DayHours, SecurityHours, Week, DAYS};
use shared::records::ats as records;
use shared::{op, operator_op, ApiError, Ctx, Params, Plan, Reply, Routes};

use crate::support;

/// deleteSecurityMarketHours's `securityHoursDetails`.
const DELETED: &str = "Security market hours deleted successfully";

/// The weekdays a security may have its own hours for, and the weekend of getMarketHolidays.
const WEEKDAYS: Range<usize> = 0..5;
const WEEKEND: Range<usize> = 5..7;

/// Part 1's market hours of some days of a week: `securityId` when the hours are a
/// security's, then per day `<day>closed` (`yes`/`no`), `<day>StartHours`,
/// `<day>StartMins`, `<day>CloseHours`, `<day>CloseMins` (two digits each, Eastern; `00`
/// throughout for a closed day). The names are built from the day, so the map is written
/// here rather than derived.
struct HoursView {
    security_id: Option<String>,
    days: Vec<(&'static str, DayHours)>,
}

impl HoursView {
    fn of(week: &Week, days: Range<usize>, security_id: Option<String>) -> Self {
        HoursView {
            security_id,
            days: days.map(|i| (DAYS[i], week.0[i])).collect(),
        }
    }
}

impl Serialize for HoursView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.days.len() * 5 + usize::from(self.security_id.is_some())))?;
        if let Some(id) = &self.security_id {
            map.serialize_entry("securityId", id)?;
        }
        for (day, hours) in &self.days {
            let session = if hours.closed { DayHours::CLOSED } else { *hours };
            let (start_hours, start_mins) = hhmm(session.start);
            let (close_hours, close_mins) = hhmm(session.end);
            map.serialize_entry(&format!("{day}closed"), if hours.closed { "yes" } else { "no" })?;
            map.serialize_entry(&format!("{day}StartHours"), &start_hours)?;
            map.serialize_entry(&format!("{day}StartMins"), &start_mins)?;
            map.serialize_entry(&format!("{day}CloseHours"), &close_hours)?;
            map.serialize_entry(&format!("{day}CloseMins"), &close_mins)?;
        }
        map.end()
    }
}

/// The required `securityId` (`106` when absent or blank).
fn security_id(p: &Params) -> Result<String, ApiError> {
    Ok(p.req(&["securityId"])?.trim().to_owned())
}

/// A parameter's trimmed text, `None` when absent or blank.
fn given(p: &Params, name: &str) -> Result<Option<String>, ApiError> {
    Ok(p.opt(&[name])?.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()))
}

/// One weekday of createSecurityMarketHours: `<day>Closed=yes` closes it (its hours, if
/// any, are ignored); otherwise `<day>HoursStart` and `<day>HoursEnd` together give its
/// session; `None` when the request names neither.
fn own_day(p: &Params, day: &str) -> Result<Option<DayHours>, ApiError> {
    let closed = format!("{day}Closed");
    match given(p, &closed)? {
        Some(v) if v.eq_ignore_ascii_case("yes") => return Ok(Some(DayHours::CLOSED)),
        Some(_) => return Err(invalid(&closed, "yes, or absent when the day has hours")),
        None => {}
    }
    let (start_name, end_name) = (format!("{day}HoursStart"), format!("{day}HoursEnd"));
    let (start, end) = match (given(p, &start_name)?, given(p, &end_name)?) {
        (None, None) => return Ok(None),
        (Some(_), None) => return Err(invalid(&end_name, &format!("required with {start_name}"))),
        (None, Some(_)) => return Err(invalid(&start_name, &format!("required with {end_name}"))),
        (Some(start), Some(end)) => (start, end),
    };
    let time = |name: &str, text: &str| minutes(text).ok_or_else(|| invalid(name, "HH:MM from 00:00 to 24:00"));
    let (start, end) = (time(&start_name, &start)?, time(&end_name, &end)?);
    if start >= end {
        return Err(invalid(&end_name, &format!("must be after {start_name}")));
    }
    Ok(Some(DayHours::open(start, end)))
}

/// `110` when the request sets a day's hours the key has no permission for.
fn check_hour_fields(ctx: &Ctx, p: &Params) -> Result<(), ApiError> {
    for day in &DAYS[WEEKDAYS] {
        for suffix in ["Closed", "HoursStart", "HoursEnd"] {
            ctx.check_fields(p, &[&format!("{day}{suffix}")])?;
        }
    }
    Ok(())
}

/// createSecurityMarketHours's days; at least one must be given (`106`).
fn own_hours(p: &Params) -> Result<SecurityHours, ApiError> {
    let mut own: SecurityHours = [None; 5];
    for (slot, day) in own.iter_mut().zip(&DAYS[WEEKDAYS]) {
        *slot = own_day(p, day)?;
    }
    if own.iter().all(Option::is_none) {
        return Err(invalid(
            "marketHours",
            "at least one weekday's <day>Closed, or <day>HoursStart and <day>HoursEnd, is required",
        ));
    }
    Ok(own)
}

/// `POST /v3/createSecurityMarketHours`: `securityId` (`106`; `138` unless an approved
/// offering of the caller) and per weekday `<day>Closed` / `<day>HoursStart` /
/// `<day>HoursEnd`. The days given replace the security's earlier own hours; the others
/// follow the global week. Answers `securityHoursDetails`: the security's hours in force.
async fn create(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    check_hour_fields(&ctx, &p)?;
    let id = security_id(&p)?;
    let own = own_hours(&p)?;
    let view = ctx
        .transact(async move |ctx, _| {
            let security = support::security(&ctx, &id, None).await?.rec.id;
            let write = records::set_security_hours(ctx.client_id(), &security, Some(&own))?;
            let week = records::week(ctx.store(), ctx.client_id()).await?.with_security(&own);
            Ok(Plan::new(vec![write], HoursView::of(&week, WEEKDAYS, Some(security))))
        })
        .await?;
    Ok(Reply::ok().with("securityHoursDetails", view))
}

/// `GET /operator/clients/{clientId}/securities/{securityId}/market-hours`: the security's
/// hours in force, as createSecurityMarketHours answers them (`{"clientId",
/// "securityHoursDetails"}`); 404 for a security that is not an approved offering of the
/// client. The client API has no such read: getSecurityMarketHours, which some clients call,
/// is outside the catalogue (CONTRACT: `1404`).
async fn security_week(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let id = req.param("securityId");
    let unknown = || OpError::NotFound(format!("no security {id} of client {}", ctx.client_id()));
    let security = support::security(&ctx, id, None).await.map_err(|_| unknown())?.rec.id;
    let week = records::trading_week(ctx.store(), ctx.client_id(), &security)
        .await
        .map_err(|e| OpError::internal_from("security market hours", e))?;
    let view = HoursView::of(&week, WEEKDAYS, Some(security));
    Ok(OpReply::ok(
        json!({"clientId": ctx.client_id(), "securityHoursDetails": view}),
    ))
}

/// `POST /v3/deleteSecurityMarketHours`: `securityId` (`106`, `138`); the security follows
/// the global week again. Answers `securityHoursDetails` = the deletion message.
async fn delete(ctx: Ctx, p: Params) -> Result<Reply, ApiError> {
    let id = security_id(&p)?;
    ctx.transact(async move |ctx, _| {
        let security = support::security(&ctx, &id, None).await?.rec.id;
        let write = records::set_security_hours(ctx.client_id(), &security, None)?;
        Ok(Plan::new(vec![write], ()))
    })
    .await?;
    Ok(Reply::ok().with("securityHoursDetails", DELETED))
}

/// `POST /v3/getMarketHours`: `globalMarketHours`, the client's Monday-Friday.
async fn market_hours(ctx: Ctx, _: Params) -> Result<Reply, ApiError> {
    let week = records::week(ctx.store(), ctx.client_id()).await?;
    Ok(Reply::ok().with("globalMarketHours", HoursView::of(&week, WEEKDAYS, None)))
}

/// `POST /v3/getMarketHolidays`: `globalMarketHolidays`, the client's Saturday and Sunday.
async fn market_holidays(ctx: Ctx, _: Params) -> Result<Reply, ApiError> {
    let week = records::week(ctx.store(), ctx.client_id()).await?;
    Ok(Reply::ok().with("globalMarketHolidays", HoursView::of(&week, WEEKEND, None)))
}

// ---------------------------------------------------------------- the operator's week

/// One day of the operator's body and answer: `closed`, and for an open day its `start`
/// and `end` (`HH:MM`; null in the answer for a closed day).
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct OperatorDay {
    #[serde(default)]
    closed: bool,
    start: Option<String>,
    end: Option<String>,
}

impl OperatorDay {
    fn of(h: DayHours) -> Self {
        let time = |m: u16| {
            let (hh, mm) = hhmm(m);
            format!("{hh}:{mm}")
        };
        OperatorDay {
            closed: h.closed,
            start: (!h.closed).then(|| time(h.start)),
            end: (!h.closed).then(|| time(h.end)),
        }
    }

    /// The day's session (`closed: true` needs no times, and any given are ignored).
    fn hours(self, day: &str) -> Result<DayHours, OpError> {
        if self.closed {
            return Ok(DayHours::CLOSED);
        }
        let (Some(start), Some(end)) = (self.start, self.end) else {
            return Err(OpError::BadRequest(format!(
                "{day}: start and end are required unless closed"
            )));
        };
        DayHours::parse(&start, &end).ok_or_else(|| {
            OpError::BadRequest(format!(
                "{day}: start and end are HH:MM from 00:00 to 24:00, start before end"
            ))
        })
    }
}

/// The operator's answer: `clientId`, then every day Monday to Sunday.
struct OperatorWeek<'a> {
    client_id: &'a str,
    week: &'a Week,
}

impl Serialize for OperatorWeek<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1 + DAYS.len()))?;
        map.serialize_entry("clientId", self.client_id)?;
        for (day, hours) in DAYS.iter().zip(self.week.0) {
            map.serialize_entry(day, &OperatorDay::of(hours))?;
        }
        map.end()
    }
}

/// The days the body sets, Monday first (`400` for a key that is not a day, or a day that
/// is not valid).
fn week_patch(body: &Map<String, Value>) -> Result<[Option<DayHours>; 7], OpError> {
    let mut patch = [None; 7];
    for (key, value) in body {
        let i = DAYS
            .iter()
            .position(|d| d == key)
            .ok_or_else(|| OpError::BadRequest(format!("unknown key {key}: the keys are days, monday to sunday")))?;
        let day = OperatorDay::deserialize(value).map_err(|e| OpError::BadRequest(format!("{key}: {e}")))?;
        patch[i] = Some(day.hours(key)?);
    }
    Ok(patch)
}

/// `PUT /operator/clients/{clientId}/market-hours`: `{"monday": {"closed": false, "start":
/// "09:30", "end": "16:00"}, ...}`, any of the seven days, omitted days unchanged; answers
/// the client's whole week.
async fn put_week(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let patch = week_patch(&req.body)?;
    let ctx = octx.for_client(req.param("clientId"), "operator").await?;
    let week = ctx
        .transact(async move |ctx, _| {
            let (mut week, version) = records::stored_week(ctx.store(), ctx.client_id()).await?;
            for (day, new) in week.0.iter_mut().zip(patch) {
                if let Some(hours) = new {
                    *day = hours;
                }
            }
            Ok(Plan::new(
                vec![records::set_week(ctx.client_id(), &week, version)?],
                week,
            ))
        })
        .await?;
    let view = OperatorWeek {
        client_id: ctx.client_id(),
        week: &week,
    };
    let body = serde_json::to_value(view).map_err(|e| OpError::internal_from("market hours view", e))?;
    Ok(OpReply::ok(body))
}

pub fn routes() -> Routes {
    Routes::new()
        .op("createSecurityMarketHours", op!(create))
        .op("deleteSecurityMarketHours", op!(delete))
        .op("getMarketHours", op!(market_hours))
        .op("getMarketHolidays", op!(market_holidays))
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/market-hours",
            operator_op!(put_week),
        )
        .operator(
            Method::GET,
            "/operator/clients/{clientId}/securities/{securityId}/market-hours",
            operator_op!(security_week),
        )
}
