//! ATS market hours: the client's global week (getMarketHours, getMarketHolidays) and the
//! operator's `PUT .../market-hours` that sets it; a security's own weekday hours
//! (createSecurityMarketHours, deleteSecurityMarketHours), answered
//! as the hours in force; `106` for invalid hours, `138` for anything but an approved
//! offering of the caller. Each case runs on both backends.

use api_tests::{both, Creds, Resp, TestApp};
use http::Method;
use serde_json::{json, Map, Value};

use crate::fixtures::approved_offering_as;
use crate::fixtures::code;
use crate::trades::offering;

/// A day's five fields as the ATS answers them: open from `start` to `end` (`HH:MM`), or
/// closed (`None`: `00` throughout).
fn day_fields(out: &mut Map<String, Value>, day: &str, session: Option<(&str, &str)>) {
    let (closed, start, end) = match session {
        Some((start, end)) => ("no", start, end),
        None => ("yes", "00:00", "00:00"),
    };
    let (sh, sm) = start.split_once(':').unwrap();
    let (ch, cm) = end.split_once(':').unwrap();
    out.insert(format!("{day}closed"), json!(closed));
    out.insert(format!("{day}StartHours"), json!(sh));
    out.insert(format!("{day}StartMins"), json!(sm));
    out.insert(format!("{day}CloseHours"), json!(ch));
    out.insert(format!("{day}CloseMins"), json!(cm));
}

/// The expected object of `days`, after `securityId` when given.
fn hours(security: Option<&str>, days: &[(&str, Option<(&str, &str)>)]) -> Value {
    let mut out = Map::new();
    if let Some(id) = security {
        out.insert("securityId".into(), json!(id));
    }
    for (day, session) in days {
        day_fields(&mut out, day, *session);
    }
    Value::Object(out)
}

const DEFAULT: Option<(&str, &str)> = Some(("09:30", "16:00"));

/// The default weekdays, with `changes` in place of theirs.
fn weekdays(security: Option<&str>, changes: &[(&str, Option<(&str, &str)>)]) -> Value {
    let days: Vec<(&str, Option<(&str, &str)>)> = ["monday", "tuesday", "wednesday", "thursday", "friday"]
        .into_iter()
        .map(|d| (d, changes.iter().find(|(c, _)| *c == d).map_or(DEFAULT, |(_, s)| *s)))
        .collect();
    hours(security, &days)
}

/// The keys of an object, in order.
fn keys(v: &Value) -> Vec<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

async fn market_hours(t: &TestApp) -> Value {
    let r = t.post("getMarketHours", &[]).await;
    code(&r, "101");
    r.json["globalMarketHours"].clone()
}

async fn market_holidays(t: &TestApp) -> Value {
    let r = t.post("getMarketHolidays", &[]).await;
    code(&r, "101");
    r.json["globalMarketHolidays"].clone()
}

fn week_path(client: &str) -> String {
    format!("/operator/clients/{client}/market-hours")
}

async fn set_week(t: &TestApp, body: Value) -> Value {
    let r = t.operator(Method::PUT, &week_path(&t.client_id), body).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json
}

/// An approved offering of the client of `c`: a security.
async fn security_as(t: &TestApp, c: &Creds) -> String {
    approved_offering_as(t, c).await.0
}

async fn security(t: &TestApp) -> String {
    security_as(t, &t.creds()).await
}

async fn create_hours(t: &TestApp, security: &str, days: &[(&str, &str)]) -> Resp {
    let mut params = vec![("securityId", security)];
    params.extend_from_slice(days);
    t.post("createSecurityMarketHours", &params).await
}

/// A security's hours in force, as the operator reads them (the client API has no read:
/// getSecurityMarketHours is outside the catalogue).
async fn security_hours(t: &TestApp, security: &str) -> Value {
    let path = format!("/operator/clients/{}/securities/{security}/market-hours", t.client_id);
    let r = t.operator(Method::GET, &path, Value::Null).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    r.json["securityHoursDetails"].clone()
}

both!(
    market_hours_default_to_weekdays_half_past_nine_to_four_with_the_weekend_closed,
    |t: TestApp| async move {
        let week = market_hours(&t).await;
        assert_eq!(week, weekdays(None, &[]));
        let order = keys(&weekdays(None, &[]));
        assert_eq!(keys(&week), order, "Monday first, five fields a day");
        assert_eq!(
            &order[..5],
            [
                "mondayclosed",
                "mondayStartHours",
                "mondayStartMins",
                "mondayCloseHours",
                "mondayCloseMins"
            ]
        );

        let weekend = market_holidays(&t).await;
        let expected = hours(None, &[("saturday", None), ("sunday", None)]);
        assert_eq!(keys(&weekend), keys(&expected));
        assert_eq!(weekend, expected);
        assert_eq!(weekend["saturdayclosed"], "yes");
        assert_eq!(weekend["sundayStartHours"], "00");
    }
);

both!(
    the_operator_sets_the_global_week_that_get_market_hours_and_holidays_answer,
    |t: TestApp| async move {
        let r = set_week(
            &t,
            json!({
                "monday": {"closed": true},
                "tuesday": {"closed": false, "start": "08:00", "end": "17:30"},
                "saturday": {"start": "10:00", "end": "14:00"},
            }),
        )
        .await;
        let open = |start: &str, end: &str| json!({"closed": false, "start": start, "end": end});
        let closed = json!({"closed": true, "start": null, "end": null});
        assert_eq!(
            r,
            json!({
                "clientId": t.client_id,
                "monday": closed,
                "tuesday": open("08:00", "17:30"),
                "wednesday": open("09:30", "16:00"),
                "thursday": open("09:30", "16:00"),
                "friday": open("09:30", "16:00"),
                "saturday": open("10:00", "14:00"),
                "sunday": closed,
            })
        );
        assert_eq!(
            keys(&r),
            [
                "clientId",
                "monday",
                "tuesday",
                "wednesday",
                "thursday",
                "friday",
                "saturday",
                "sunday"
            ]
        );
        assert_eq!(
            market_hours(&t).await,
            weekdays(None, &[("monday", None), ("tuesday", Some(("08:00", "17:30")))])
        );
        assert_eq!(
            market_holidays(&t).await,
            hours(None, &[("saturday", Some(("10:00", "14:00"))), ("sunday", None)])
        );

        // Omitted days are unchanged; a session may end at midnight.
        let r = set_week(&t, json!({"wednesday": {"start": "00:00", "end": "24:00"}})).await;
        assert_eq!(r["monday"], closed);
        assert_eq!(r["wednesday"], open("00:00", "24:00"));
        assert_eq!(
            market_hours(&t).await,
            weekdays(
                None,
                &[
                    ("monday", None),
                    ("tuesday", Some(("08:00", "17:30"))),
                    ("wednesday", Some(("00:00", "24:00"))),
                ]
            )
        );
    }
);

both!(
    the_operator_market_hours_refuse_a_bad_body_with_400_and_change_nothing,
    |t: TestApp| async move {
        let path = week_path(&t.client_id);
        for (label, body) in [
            ("not an object", json!([])),
            ("a key that is not a day", json!({"funday": {"closed": true}})),
            ("a day that is not an object", json!({"monday": "09:30"})),
            (
                "an unknown day field",
                json!({"monday": {"closed": true, "open": true}}),
            ),
            ("an open day without times", json!({"monday": {"closed": false}})),
            ("only a start", json!({"monday": {"start": "09:30"}})),
            ("start after end", json!({"monday": {"start": "16:00", "end": "09:30"}})),
            (
                "start equal to end",
                json!({"monday": {"start": "09:30", "end": "09:30"}}),
            ),
            ("after midnight", json!({"monday": {"start": "09:30", "end": "24:01"}})),
            ("not HH:MM", json!({"monday": {"start": "9:30", "end": "16:00"}})),
            ("closed not a boolean", json!({"monday": {"closed": "yes"}})),
            (
                "one good day, one bad",
                json!({"tuesday": {"closed": true}, "monday": {"start": "x", "end": "y"}}),
            ),
        ] {
            let r = t.operator(Method::PUT, &path, body).await;
            assert_eq!(r.status, 400, "{label}: {:?}", r.json);
        }
        assert_eq!(market_hours(&t).await, weekdays(None, &[]));
        let r = t
            .operator(
                Method::PUT,
                &week_path("no-such-client"),
                json!({"monday": {"closed": true}}),
            )
            .await;
        assert_eq!(r.status, 404, "{:?}", r.json);
    }
);

both!(the_global_week_is_the_clients_own, |t: TestApp| async move {
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    set_week(&t, json!({"friday": {"closed": true}})).await;
    let r = t.form_as(&other, Method::POST, "getMarketHours", &[]).await;
    code(&r, "101");
    assert_eq!(r.json["globalMarketHours"], weekdays(None, &[]));
});

both!(
    create_security_market_hours_answers_the_securitys_hours_in_force,
    |t: TestApp| async move {
        let s = security(&t).await;
        let r = create_hours(
            &t,
            &s,
            &[
                ("mondayClosed", "YES"),
                // Ignored: the day is closed.
                ("mondayHoursStart", "08:00"),
                ("mondayHoursEnd", "09:00"),
                ("tuesdayHoursStart", "08:00"),
                ("tuesdayHoursEnd", "20:15"),
                ("fridayClosed", ""),
                ("fridayHoursStart", "10:00"),
                ("fridayHoursEnd", "24:00"),
            ],
        )
        .await;
        code(&r, "101");
        let expected = weekdays(
            Some(&s),
            &[
                ("monday", None),
                ("tuesday", Some(("08:00", "20:15"))),
                ("friday", Some(("10:00", "24:00"))),
            ],
        );
        let details = &r.json["securityHoursDetails"];
        assert_eq!(details, &expected);
        assert_eq!(keys(details), keys(&expected), "securityId, then Monday to Friday");
        assert_eq!(details["mondayStartHours"], "00");
        assert_eq!(security_hours(&t, &s).await, expected);
        // Only this security.
        assert_eq!(market_hours(&t).await, weekdays(None, &[]));
        let other = security(&t).await;
        assert_eq!(security_hours(&t, &other).await, weekdays(Some(&other), &[]));

        // A new call replaces the security's earlier days.
        let r = create_hours(&t, &s, &[("wednesdayClosed", "yes")]).await;
        code(&r, "101");
        let expected = weekdays(Some(&s), &[("wednesday", None)]);
        assert_eq!(r.json["securityHoursDetails"], expected);
        assert_eq!(security_hours(&t, &s).await, expected);
    }
);

both!(
    a_securitys_hours_follow_the_global_week_on_the_days_it_does_not_name,
    |t: TestApp| async move {
        let s = security(&t).await;
        code(
            &create_hours(&t, &s, &[("mondayHoursStart", "07:00"), ("mondayHoursEnd", "12:00")]).await,
            "101",
        );
        set_week(
            &t,
            json!({"monday": {"closed": true}, "thursday": {"start": "11:00", "end": "13:45"}}),
        )
        .await;
        assert_eq!(
            security_hours(&t, &s).await,
            weekdays(
                Some(&s),
                &[
                    ("monday", Some(("07:00", "12:00"))),
                    ("thursday", Some(("11:00", "13:45")))
                ]
            )
        );
    }
);

/// (what is wrong, the day parameters, the field the `106` names)
type InvalidCase = (&'static str, Vec<(&'static str, &'static str)>, &'static str);

both!(
    create_security_market_hours_refuses_invalid_hours_with_106_naming_the_field,
    |t: TestApp| async move {
        let s = security(&t).await;
        let cases: [InvalidCase; 10] = [
            ("no day", vec![], "marketHours"),
            (
                "not HH:MM",
                vec![("mondayHoursStart", "8:00"), ("mondayHoursEnd", "16:00")],
                "mondayHoursStart",
            ),
            (
                "past midnight",
                vec![("tuesdayHoursStart", "09:00"), ("tuesdayHoursEnd", "24:30")],
                "tuesdayHoursEnd",
            ),
            (
                "not a time",
                vec![("tuesdayHoursStart", "nine"), ("tuesdayHoursEnd", "17:00")],
                "tuesdayHoursStart",
            ),
            (
                "start after end",
                vec![("wednesdayHoursStart", "16:00"), ("wednesdayHoursEnd", "09:30")],
                "wednesdayHoursEnd",
            ),
            (
                "start equal to end",
                vec![("thursdayHoursStart", "10:00"), ("thursdayHoursEnd", "10:00")],
                "thursdayHoursEnd",
            ),
            ("only a start", vec![("fridayHoursStart", "10:00")], "fridayHoursEnd"),
            ("only an end", vec![("fridayHoursEnd", "10:00")], "fridayHoursStart"),
            ("closed not yes", vec![("mondayClosed", "no")], "mondayClosed"),
            (
                "one good day, one bad",
                vec![
                    ("mondayClosed", "yes"),
                    ("fridayHoursStart", "17:00"),
                    ("fridayHoursEnd", "16:00"),
                ],
                "fridayHoursEnd",
            ),
        ];
        for (label, days, field) in cases {
            let r = create_hours(&t, &s, &days).await;
            code(&r, "106");
            assert!(r.desc().contains(field), "{label}: {:?}", r.json);
        }
        // Nothing was stored.
        assert_eq!(security_hours(&t, &s).await, weekdays(Some(&s), &[]));
    }
);

both!(
    security_market_hours_need_an_approved_offering_of_the_caller,
    |t: TestApp| async move {
        let unapproved = offering(&t, "1000").await;
        let other = t.new_client(json!({"scopes": ["*"]})).await;
        let theirs = security_as(&t, &other).await;
        let monday = [("mondayClosed", "yes")];
        for id in ["99999999", "abc", unapproved.as_str(), theirs.as_str()] {
            code(&create_hours(&t, id, &monday).await, "138");
            let path = format!("/operator/clients/{}/securities/{id}/market-hours", t.client_id);
            assert_eq!(t.operator(Method::GET, &path, Value::Null).await.status, 404, "{id}");
            code(&t.post("deleteSecurityMarketHours", &[("securityId", id)]).await, "138");
        }
        for op in ["createSecurityMarketHours", "deleteSecurityMarketHours"] {
            let r = t.post(op, &monday).await;
            code(&r, "106");
            assert!(r.desc().contains("securityId"), "{op}: {:?}", r.json);
            code(
                &t.post(op, &[("securityId", " "), ("mondayClosed", "yes")]).await,
                "106",
            );
        }
    }
);

both!(
    delete_security_market_hours_restores_the_global_hours,
    |t: TestApp| async move {
        let s = security(&t).await;
        code(
            &create_hours(&t, &s, &[("mondayClosed", "yes"), ("fridayClosed", "yes")]).await,
            "101",
        );
        set_week(&t, json!({"tuesday": {"start": "09:00", "end": "15:00"}})).await;

        let r = t.post("deleteSecurityMarketHours", &[("securityId", &s)]).await;
        code(&r, "101");
        assert_eq!(
            r.json["securityHoursDetails"],
            "Security market hours deleted successfully"
        );
        assert_eq!(
            security_hours(&t, &s).await,
            weekdays(Some(&s), &[("tuesday", Some(("09:00", "15:00")))])
        );
        // Deleting again: nothing to remove, the same answer.
        let r = t.post("deleteSecurityMarketHours", &[("securityId", &s)]).await;
        code(&r, "101");
        assert_eq!(
            r.json["securityHoursDetails"],
            "Security market hours deleted successfully"
        );
    }
);
