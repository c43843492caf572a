//! Valid request parameters, so tests state only what they vary (the API suite and the
//! local API's end-to-end tests share them).

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

/// An issuer account's required fields (createIssuerAccount), without its `issuerId`.
pub const ISSUER_ACCOUNT: &[(&str, &str)] = &[
    ("companyName", "Acme Capital LLC"),
    ("companyState", "TX"),
    ("createdIpAddress", "10.0.0.1"),
    ("issuingCountry", "USA"),
];
