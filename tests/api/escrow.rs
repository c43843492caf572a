//! Escrow balances: scope before lookup, only the caller's linked offerings, part 3's fields
//! with the offering's deal status, HTTP 502 `1502` while the escrow bank is unavailable,
//! and the reconciliation that records `reconciledAt`. (The figures against every state of
//! the ledger, on a shared account: `payments::the_escrow_ledger_follows_every_fund_move_*`.)
//! Each case runs on both backends.

use api_tests::{both, TestApp};
use bytes::Bytes;
use http::Method;
use serde_json::{json, Value};

use crate::trades::offering;

async fn link(t: &TestApp, client: &str, o: &str, body: Value) {
    let path = format!("/operator/clients/{client}/offerings/{o}/escrow-account");
    let r = t.operator(Method::PUT, &path, body).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
}

fn balances(o: &str) -> String {
    format!("/v3/offerings/{o}/escrow/balances")
}

both!(balances_check_scope_then_ownership, |t: TestApp| async move {
    let o = offering(&t, "1000").await;
    // Credentials, then scope, before anything is looked up.
    let r = t.raw(Method::GET, &balances(&o), &[], Ok(Bytes::new())).await;
    assert_eq!(r.status, 401, "{:?}", r.json);
    let narrow = t.new_client(json!({"scopes": ["account.read"]})).await;
    for id in [o.as_str(), "999999"] {
        let r = t.get_as(&narrow, &balances(id)).await;
        assert_eq!((r.status, r.code()), (403, "1403"), "{id}");
    }
    // Unknown, without an escrow account, another client's: 404.
    for id in ["999999", "abc", o.as_str()] {
        let r = t.get(&balances(id)).await;
        assert_eq!((r.status, r.code()), (404, "1404"), "{id}: {:?}", r.json);
    }
    link(
        &t,
        &t.client_id,
        &o,
        json!({"escrowAccountNumber": "ESC-77", "escrowBank": "First Escrow Bank",
               "openDate": "2026-01-05", "expirationDate": "2026-12-31"}),
    )
    .await;
    let other = t.new_client(json!({"scopes": ["*"]})).await;
    let r = t.get_as(&other, &balances(&o)).await;
    assert_eq!((r.status, r.code()), (404, "1404"), "another client's offering");

    let r = t.get(&balances(&o)).await;
    assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
    assert_eq!(
        r.json["balances"],
        json!({
            "escrowAccountNumber": "ESC-77", "escrowAccountStatus": "open", "dealStatus": "Pending",
            "escrowBank": "First Escrow Bank", "availableBalanceCents": 0, "totalBalanceCents": 0,
            "openDate": "2026-01-05", "expirationDate": "2026-12-31", "closeDate": null,
            "reconciledAt": null
        })
    );
    let keys: Vec<&String> = r.json["balances"].as_object().unwrap().keys().collect();
    assert_eq!(keys[..3], ["escrowAccountNumber", "escrowAccountStatus", "dealStatus"]);

    // A closed account still answers; a second offering on it makes the deal status null.
    let closed = json!({"escrowAccountNumber": "ESC-77", "escrowAccountStatus": "closed", "closeDate": "2026-06-30"});
    link(&t, &t.client_id, &o, closed.clone()).await;
    let b = t.get(&balances(&o)).await.json["balances"].clone();
    assert_eq!(
        (
            b["escrowAccountStatus"].as_str(),
            b["closeDate"].as_str(),
            b["dealStatus"].as_str()
        ),
        (Some("closed"), Some("2026-06-30"), Some("Pending"))
    );
    let second = offering(&t, "500").await;
    link(&t, &t.client_id, &second, closed).await;
    for id in [&o, &second] {
        let r = t.get(&balances(id)).await;
        assert_eq!(r.status, 200, "{:?}", r.json);
        assert_eq!(r.json["balances"]["dealStatus"], Value::Null, "shared");
    }
    // Relinked elsewhere, the second offering no longer shares it.
    link(&t, &t.client_id, &second, json!({"escrowAccountNumber": "ESC-78"})).await;
    let b = t.get(&balances(&o)).await.json["balances"].clone();
    assert_eq!(b["dealStatus"], "Pending");
});

both!(
    an_unavailable_bank_answers_502_and_reconciliation_records_its_time,
    |t: TestApp| async move {
        let o = offering(&t, "1000").await;
        link(&t, &t.client_id, &o, json!({"escrowAccountNumber": "ESC-9"})).await;
        let down = t
            .operator(Method::PUT, "/operator/escrow-bank", json!({"available": false}))
            .await;
        assert_eq!((down.status, down.json["available"].clone()), (200, json!(false)));
        let r = t.get(&balances(&o)).await;
        assert_eq!((r.status, r.code()), (502, "1502"), "{:?}", r.json);
        let run = t
            .operator(Method::POST, "/operator/batches/escrow/run", json!({}))
            .await;
        assert_eq!(run.json, json!({"batch": "escrow", "processed": 0}));
        let bad = t
            .operator(Method::PUT, "/operator/escrow-bank", json!({"available": "no"}))
            .await;
        assert_eq!(bad.status, 400);

        t.operator(Method::PUT, "/operator/escrow-bank", json!({"available": true}))
            .await;
        let r = t.get(&balances(&o)).await;
        assert_eq!(r.json["balances"]["reconciledAt"], Value::Null);
        t.clock.set("2026-03-02T14:00:00Z".parse().unwrap());
        let run = t
            .operator(Method::POST, "/operator/batches/escrow/run", json!({}))
            .await;
        assert_eq!(run.json, json!({"batch": "escrow", "processed": 1}));
        let r = t.get(&balances(&o)).await;
        assert_eq!(r.json["balances"]["reconciledAt"], "2026-03-02 14:00:00");

        // The schedule: 9:00 and 15:00 Eastern on business days.
        let batch = service::BATCHES
            .into_iter()
            .find(|b| b.name == "escrow")
            .expect("the escrow batch");
        let at = |s: &str| s.parse::<chrono::DateTime<chrono::Utc>>().unwrap();
        assert_eq!(batch.runs_due(at("2026-03-02T13:59:00Z")), 0, "8:59 Eastern");
        assert_eq!(batch.runs_due(at("2026-03-02T14:00:00Z")), 1, "9:00 Eastern");
        assert_eq!(batch.runs_due(at("2026-03-02T20:00:00Z")), 2, "15:00 Eastern");
        assert!(!batch.runs_on(at("2026-03-07T15:00:00Z")), "a Saturday");
        assert!(!batch.runs_on(at("2026-11-26T15:00:00Z")), "Thanksgiving");
    }
);
