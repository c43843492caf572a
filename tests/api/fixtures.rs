//! Builders for valid requests, so tests state only what they vary.

pub use api_tests::params::*;
use api_tests::{Creds, Listener, Resp, TestApp};
use http::Method;

pub async fn create_party_as(t: &TestApp, c: &Creds) -> String {
    let r = t.form_as(c, Method::PUT, "createParty", PARTY).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("partyDetails")["partyId"].as_str().unwrap().to_owned()
}

pub async fn create_party(t: &TestApp) -> String {
    create_party_as(t, &t.creds()).await
}

pub async fn create_entity(t: &TestApp) -> String {
    let r = t.put("createEntity", ENTITY).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("entityDetails")["partyId"].as_str().unwrap().to_owned()
}

pub async fn create_account_as(t: &TestApp, c: &Creds, extra: &[(&str, &str)]) -> String {
    let r = t.form_as(c, Method::PUT, "createAccount", &with(ACCOUNT, extra)).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.json["accountDetails"][0]["accountId"].as_str().unwrap().to_owned()
}

pub async fn create_account(t: &TestApp) -> String {
    create_account_as(t, &t.creds(), &[]).await
}

pub async fn link(t: &TestApp, account: &str, related_type: &str, related: &str, primary: &str) -> Resp {
    t.put(
        "createLink",
        &[
            ("firstEntryType", "Account"),
            ("firstEntry", account),
            ("relatedEntryType", related_type),
            ("relatedEntry", related),
            ("linkType", "owner"),
            ("primary_value", primary),
        ],
    )
    .await
}

/// An issuer and an offering of the client of `c`, approved by the operator: an ATS
/// security, as (offeringId, issuerId).
pub async fn approved_offering_as(t: &TestApp, c: &Creds) -> (String, String) {
    let r = t.form_as(c, Method::PUT, "createIssuer", ISSUER).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let issuer = r.inserted("issuerDetails")["issuerId"].as_str().unwrap().to_owned();
    let params = with(OFFERING, &[("issuerId", issuer.as_str())]);
    let r = t.form_as(c, Method::PUT, "createOffering", &params).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    let id = r.inserted("offeringDetails")["offeringId"].as_str().unwrap().to_owned();
    let path = format!("/operator/clients/{}/offerings/{id}/approve", c.id);
    let r = t.operator(Method::POST, &path, serde_json::json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.json);
    (id, issuer)
}

/// A `CREATED` ACH trade of `units` units; answers its ID.
pub async fn create_trade(t: &TestApp, account: &str, offering: &str, units: &str) -> String {
    let params = [
        ("accountId", account),
        ("offeringId", offering),
        ("transactionType", "ACH"),
        ("transactionUnits", units),
    ];
    let r = t.post("createTrade", &params).await;
    assert_eq!(r.code(), "101", "{:?}", r.json);
    r.inserted("purchaseDetails")["tradeId"].as_str().unwrap().to_owned()
}

/// Asserts a response's `statusCode`, showing the body when it differs.
#[track_caller]
pub fn code(r: &Resp, expected: &str) {
    assert_eq!(r.code(), expected, "{:?}", r.json);
}

/// A listener registered for `method`'s webhooks of the sandbox client.
pub async fn hook(t: &TestApp, method: &str) -> Listener {
    let l = Listener::start(200).await;
    t.register_webhook(method, &[&l.url]).await;
    l
}

/// `s` percent-encoded for a query string.
pub fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// CONTRACT, "Lists": every field of a list's records filters (the first record found by
/// its own value, whatever the field's kind) and sorts. `path` lists under `key`, `id` naming
/// each record.
pub async fn every_field_filters_and_sorts(t: &TestApp, path: &str, key: &str, id: &str) {
    let r = t.get(path).await;
    let record = r.json[key][0]
        .as_object()
        .unwrap_or_else(|| panic!("{path}: {:?}", r.json))
        .clone();
    for (field, value) in &record {
        if !(value.is_string() || value.is_number() || value.is_boolean()) {
            continue;
        }
        let filter = serde_json::json!({ field: value }).to_string();
        let r = t.get(&format!("{path}?limit=500&filter={}", urlencode(&filter))).await;
        assert_eq!(r.code(), "101", "{path} filter {filter}: {:?}", r.json);
        let found = r.json[key].as_array().unwrap();
        assert!(
            found.iter().any(|x| x[id] == record[id]),
            "{path} filter {filter} finds the record"
        );
        let r = t.get(&format!("{path}?sort={field}:asc")).await;
        assert_eq!(r.code(), "101", "{path} sort {field}: {:?}", r.json);
    }
}
