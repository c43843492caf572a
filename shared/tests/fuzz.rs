//! Property fuzzing on stable Rust (issue 16): the parameter parser (query, form, JSON and
//! multipart bodies, then every parameter read), the list grammar (`filter`, `sort`, paging)
//! and the envelope renderer take any input without a panic, and what they refuse is a
//! client error, never a 5xx. A fixed number of cases per run (proptest's defaults are
//! seeded per run; failures print their minimal case).

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Map, Value};
use shared::error::{ApiError, Style};
use shared::http::envelope::{render_error, render_reply, Reply};
use shared::http::params::Params;
use shared::list::{parse, ListSpec};

const CASES: u32 = 1024;

/// Content types the kernel tells apart, and anything else.
fn content_type() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("application/x-www-form-urlencoded".to_owned())),
        Just(Some("application/json".to_owned())),
        Just(Some("application/vnd.api+json".to_owned())),
        Just(Some("multipart/form-data; boundary=XyZ".to_owned())),
        Just(Some("multipart/form-data".to_owned())),
        ".{0,40}".prop_map(Some),
    ]
}

/// Any JSON value, a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,10}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// A multipart body with `parts` (name, file name, bytes), cut at `cut` of its length.
fn multipart(parts: &[(String, Option<String>, Vec<u8>)], cut: f64) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, file, bytes) in parts {
        out.extend_from_slice(b"--XyZ\r\nContent-Disposition: form-data; name=\"");
        out.extend_from_slice(name.as_bytes());
        out.push(b'"');
        if let Some(f) = file {
            out.extend_from_slice(b"; filename=\"");
            out.extend_from_slice(f.as_bytes());
            out.push(b'"');
        }
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"--XyZ--\r\n");
    let keep = ((out.len() as f64) * cut.clamp(0.0, 1.0)) as usize;
    out.truncate(keep.max(1));
    out
}

#[track_caller]
fn client_error(e: &ApiError) {
    for style in [Style::Method, Style::Resource] {
        let status = e.http_status(style);
        assert!((400..500).contains(&status), "{e:?} is HTTP {status}");
    }
}

/// Parses a request's parameters as the kernel does, then reads every one of them as a
/// handler would.
fn parse_request(query: Option<&str>, ct: Option<&str>, body: Vec<u8>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let mut p = match Params::from_query(query) {
            Ok(p) => p,
            Err(e) => return client_error(&e),
        };
        if let Err(e) = p.add_body(ct, Bytes::from(body)).await {
            return client_error(&e);
        }
        let names: Vec<String> = p.map().keys().cloned().collect();
        for name in &names {
            for read in [
                p.req(&[name.as_str()]),
                p.opt(&[name.as_str()]).map(|o| o.unwrap_or_default()),
            ] {
                if let Err(e) = read {
                    client_error(&e);
                }
            }
        }
    });
}

const SPEC: ListSpec = ListSpec::newest_first("id")
    .ids(&["accountId"])
    .numbers(&["amount"])
    .dates(&["createdDate", "updatedDate"])
    .texts(&["status", "name"]);

fn list_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("limit".to_owned()),
        Just("offset".to_owned()),
        Just("deleted".to_owned()),
        Just("sort".to_owned()),
        Just("filter".to_owned()),
        "(id|accountId|amount|createdDate|status|name|nope)".prop_flat_map(|f| {
            prop_oneof![
                Just(format!("filter[{f}]")),
                Just(format!("filter[{f}][]")),
                "(min|max|min_inclusive|max_inclusive|x)".prop_map(move |b| format!("filter[{f}][{b}]")),
            ]
        }),
        ".{0,12}",
    ]
}

fn list_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?[0-9]{1,4}",
        "(true|false|yes|1|0)",
        "-?(createdDate|amount|status|name|id|x)(,-?(amount|id))?",
        json().prop_map(|v| v.to_string()),
        "20[0-9]{2}-[01][0-9]-[0-3][0-9]( [0-2][0-9]:[0-5][0-9]:[0-5][0-9])?",
        ".{0,24}",
    ]
}

fn record() -> impl Strategy<Value = Map<String, Value>> {
    (json(), json(), json()).prop_map(|(a, b, c)| {
        let mut m = Map::new();
        m.insert("id".into(), a);
        m.insert("amount".into(), b);
        m.insert("createdDate".into(), c);
        m
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        // A failure prints its minimal case; nothing is written into the tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_bytes_under_any_content_type(
        query in proptest::option::of(".{0,60}"),
        ct in content_type(),
        body in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        parse_request(query.as_deref(), ct.as_deref(), body);
    }

    #[test]
    fn any_json_body(v in json()) {
        parse_request(None, Some("application/json"), v.to_string().into_bytes());
    }

    #[test]
    fn any_form_body(pairs in prop::collection::vec((".{0,12}", ".{0,24}"), 0..8)) {
        let body = serde_urlencoded::to_string(&pairs).expect("a form");
        parse_request(Some(&body), None, body.clone().into_bytes());
    }

    #[test]
    fn any_multipart_body(
        parts in prop::collection::vec(
            ("[a-zA-Z0-9_\\[\\]]{0,12}", proptest::option::of("[a-z.]{0,12}"), prop::collection::vec(any::<u8>(), 0..64)),
            0..5,
        ),
        cut in 0.0f64..1.2,
    ) {
        parse_request(None, Some("multipart/form-data; boundary=XyZ"), multipart(&parts, cut));
    }

    #[test]
    fn any_list_query(
        pairs in prop::collection::vec((list_key(), list_value()), 0..6),
        records in prop::collection::vec(record(), 0..6),
    ) {
        match parse(&pairs, &SPEC) {
            Err(e) => prop_assert!((400..500).contains(&e.http_status()), "{e:?}"),
            Ok(q) => {
                let mut kept: Vec<&Map<String, Value>> = records.iter().filter(|r| q.matches(r)).collect();
                kept.sort_by(|a, b| q.cmp(a, b));
                let _ = q.check_offset(kept.len());
            }
        }
    }

    #[test]
    fn every_answer_renders_as_one_json_object(
        desc in ".{0,40}",
        body in prop::collection::btree_map(".{0,10}", json(), 0..5),
        name in ".{0,20}",
        why in ".{0,40}",
        code in 0u16..1000,
    ) {
        let mut reply = Reply::ok().desc(desc.clone());
        for (k, v) in body {
            reply = reply.with_value(&k, v);
        }
        let (status, bytes) = render_reply(reply);
        prop_assert_eq!(status, 200);
        let v: Value = serde_json::from_slice(&bytes).expect("JSON");
        prop_assert!(v.get("statusCode").is_some());
        let errors = [
            ApiError::missing(&name),
            ApiError::invalid(&name, why.clone()),
            ApiError::Malformed(why.clone()),
            ApiError::not_found(why.clone()),
            ApiError::conflict(why.clone()),
            ApiError::coded("148", why.clone()),
            ApiError::coded_http("1422", 422, why.clone()),
            ApiError::internal(why.clone()),
            ApiError::UnknownRoute(name.clone()),
            ApiError::TooLarge(usize::from(code)),
        ];
        for e in &errors {
            for style in [Style::Method, Style::Resource] {
                let (status, bytes) = render_error(e, style, "req-1");
                prop_assert!((200..600).contains(&status));
                let v: Value = serde_json::from_slice(&bytes).expect("JSON");
                let first = v.as_object().and_then(|m| m.keys().next().cloned());
                prop_assert_eq!(first.as_deref(), Some("statusCode"));
                if matches!(e, ApiError::Internal(_)) {
                    // Nothing internal reaches the client: the request ID only.
                    prop_assert_eq!(&v["statusDesc"], "Internal error (request req-1)");
                    prop_assert_eq!(v.as_object().map(Map::len), Some(2));
                }
            }
        }
    }
}
