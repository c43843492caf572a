//! Property fuzzing through the whole request path (issue 16): random operations of
//! `all_routes()` with random JSON and form bodies — real IDs of the caller mixed with
//! arrays, objects, numbers, huge and odd strings — never answer a server error. A fixed,
//! seeded number of cases per backend (`shared/tests/fuzz.rs` fuzzes the parser, the list
//! grammar and the envelope on their own).

use api_tests::{both, TestApp};
use bytes::Bytes;
use http::Method;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value};

use crate::trades::{investor, offering};

const CASES: usize = 300;

/// Parameter names the operations read.
const NAMES: &[&str] = &[
    "accountId",
    "partyId",
    "tradeId",
    "offeringId",
    "issuerId",
    "amount",
    "units",
    "transactionUnits",
    "transactionType",
    "status",
    "type",
    "id",
    "RefNum",
    "orderid",
    "quantity",
    "price",
    "limit",
    "offset",
    "filter",
    "documentId",
    "custAccRequestID",
    "requestId",
    "firstName",
    "dob",
    "archiveStatus",
    "relatedEntry",
    "firstEntry",
    "notes",
    "createdIpAddress",
    "securityid",
    "memberid",
    "isAttested",
];

fn value(real: Vec<String>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "-?[0-9]{1,30}(\\.[0-9]{1,8})?".prop_map(Value::String),
        ".{0,40}".prop_map(Value::String),
        prop::sample::select(real).prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

both!(random_requests_never_reach_a_server_error, |t: TestApp| async move {
    let (account, party) = investor(&t).await;
    let o = offering(&t, "1000").await;
    let real = vec![account, party, o, "A9999999".to_owned(), String::new()];
    let ops = service::all_routes().op_names();
    let request = (
        prop::sample::select(ops),
        prop::collection::btree_map(prop::sample::select(NAMES), value(real), 0..8),
        any::<bool>(),
    );
    let mut runner = TestRunner::deterministic();
    let auth = t.creds().bearer();
    for _ in 0..CASES {
        let (op, params, as_json) = request.new_tree(&mut runner).expect("a case").current();
        let (ct, body) = if as_json {
            let m: Map<String, Value> = params.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
            ("application/json", Value::Object(m).to_string())
        } else {
            let pairs: Vec<(&str, String)> = params
                .iter()
                .map(|(k, v)| (*k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect();
            (
                "application/x-www-form-urlencoded",
                serde_urlencoded::to_string(&pairs).unwrap(),
            )
        };
        let headers = [("authorization", auth.as_str()), ("content-type", ct)];
        let r = t
            .raw(
                Method::POST,
                &format!("/v3/{op}"),
                &headers,
                Ok(Bytes::from(body.clone())),
            )
            .await;
        assert!(r.status < 500, "{op} {body}: {} {:?}", r.status, r.json);
    }
});
