//! Builders for valid requests, so tests state only what they vary.

use api_tests::{Creds, Resp, TestApp};
use http::Method;

pub const PARTY: &[(&str, &str)] = &[
    ("firstName", "Ann"),
    ("lastName", "Lee"),
    ("dob", "01-02-1980"),
    ("primCountry", "USA"),
    ("primAddress1", "1 Main St"),
    ("primCity", "Austin"),
    ("primState", "TX"),
    ("primZip", "78701"),
    ("emailAddress", "ann@example.com"),
];

pub const ENTITY: &[(&str, &str)] = &[
    ("entityName", "Lee Holdings LLC"),
    ("primCountry", "USA"),
    ("primAddress1", "2 Main St"),
    ("primCity", "Austin"),
    ("primState", "TX"),
    ("primZip", "78701"),
    ("emailAddress", "llc@example.com"),
];

pub const ACCOUNT: &[(&str, &str)] = &[
    ("accountRegistration", "Ann Lee"),
    ("type", "Individual"),
    ("domesticYN", "domestic_account"),
    ("streetAddress1", "1 Main St"),
    ("city", "Austin"),
    ("state", "TX"),
    ("zip", "78701"),
    ("country", "USA"),
];

/// `base` with `extra` pairs added or replacing same-named ones.
pub fn with<'a>(base: &[(&'a str, &'a str)], extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut out: Vec<_> = base
        .iter()
        .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k))
        .copied()
        .collect();
    out.extend_from_slice(extra);
    out
}

/// `base` without the named pairs.
pub fn without<'a>(base: &[(&'a str, &'a str)], drop: &[&str]) -> Vec<(&'a str, &'a str)> {
    base.iter().filter(|(k, _)| !drop.contains(k)).copied().collect()
}

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

/// An issuer with every createIssuer parameter the tests need.
pub const ISSUER: &[(&str, &str)] = &[
    ("issuerName", "Acme Capital"),
    ("firstName", "Ada"),
    ("lastName", "Stone"),
    ("email", "ada@acme.example"),
];

/// An offering of 10,000 units at 10.00 (maxAmount / unitPrice).
pub const OFFERING: &[(&str, &str)] = &[
    ("issueName", "Acme Series A"),
    ("issueType", "Equity"),
    ("targetAmount", "50000"),
    ("minAmount", "1000"),
    ("maxAmount", "100000"),
    ("unitPrice", "10"),
    ("startDate", "01-01-2026"),
    ("endDate", "12-31-2026"),
    ("offeringText", "Shares of Acme"),
    ("stampingText", "CONFIDENTIAL"),
];
