//! One typed parameter map from the query string and a form, JSON or multipart body, with
//! getters that turn a missing or malformed parameter into `106` naming it.

use bytes::Bytes;
use percent_encoding::percent_decode;
use serde_json::{Map, Value};

use crate::error::ApiError;

/// An uploaded file of a multipart body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upload {
    pub field: String,
    pub file_name: String,
    pub content_type: String,
    pub bytes: Bytes,
}

/// The request's parameters: query string first, then the body (a body value wins).
#[derive(Clone, Debug, Default)]
pub struct Params {
    map: Map<String, Value>,
    query: Vec<(String, String)>,
    uploads: Vec<Upload>,
    /// Names the body set (credentials count only from the body or a header, never the URL).
    body_keys: Vec<String>,
}

/// Decodes `application/x-www-form-urlencoded` text strictly: a bad `%` escape or bytes that
/// are not UTF-8 after decoding are errors, never replaced silently.
pub fn decode_form(raw: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in raw.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let (k, v) = match part.iter().position(|b| *b == b'=') {
            Some(i) => (&part[..i], &part[i + 1..]),
            None => (part, &b""[..]),
        };
        out.push((decode_component(k)?, decode_component(v)?));
    }
    Ok(out)
}

fn decode_component(raw: &[u8]) -> Result<String, String> {
    let mut i = 0;
    while let Some(off) = raw[i..].iter().position(|b| *b == b'%') {
        let at = i + off;
        let ok = raw.len() > at + 2 && raw[at + 1].is_ascii_hexdigit() && raw[at + 2].is_ascii_hexdigit();
        if !ok {
            return Err("invalid percent escape in form data".into());
        }
        i = at + 3;
    }
    let plus: Vec<u8> = raw.iter().map(|b| if *b == b'+' { b' ' } else { *b }).collect();
    percent_decode(&plus)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| "form data is not valid UTF-8".into())
}

/// What a handler read a parameter as: the OpenAPI document's type for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Read {
    /// Any JSON value (the handler looks at the raw value).
    Any,
    Text,
    Integer,
}

tokio::task_local! {
    static READS: std::cell::RefCell<std::collections::BTreeMap<String, Read>>;
}

/// Runs `f`, noting every parameter read on its own task and what as: how the parameters
/// each operation takes are found for its OpenAPI document (a test writes them down).
pub async fn recording<F: std::future::Future>(f: F) -> (F::Output, std::collections::BTreeMap<String, Read>) {
    READS
        .scope(Default::default(), async {
            let out = f.await;
            (out, READS.with(|r| r.take()))
        })
        .await
}

/// Notes that `name` was read as `how`, if the running task is [`recording`] (the strictest
/// reading wins).
fn note(name: &str, how: Read) {
    let _ = READS.try_with(|r| {
        let mut reads = r.borrow_mut();
        let seen = reads.entry(name.to_owned()).or_insert(how);
        *seen = (*seen).max(how);
    });
}

/// The parameters parts 2 and 3 type as integers, and the other numeric IDs and flags
/// (securities, orders, matches, fund moves, requests, documents, archive flags). A JSON
/// number with an integral value (`100006.0`, `1e0`) is read there as its digits (CONTRACT,
/// "Integral numbers"), wherever the operation reads it as text.
pub(crate) const INTEGER_PARAMS: &[&str] = &[
    "offeringId",
    "tradeId",
    "issuerId",
    "issuerID",
    "issuerid",
    "securityId",
    "securityID",
    "securityid",
    "orderId",
    "orderid",
    "matchId",
    "matchid",
    "RefNum",
    "refNum",
    "airequestId",
    "custAccRequestID",
    "documentId",
    "archiveStatus",
    "id",
    "checkNumber",
    "ExtRoutingnumber",
    "ExtAccountnumber",
    "quantity",
    "minimumThreshold",
    "phoneNumber",
    "providerid",
    "companyTaxID",
    "noOfqns",
    "idNumber",
    "totalAssets",
    "currentAnnIncome",
    "avgAnnIncome",
    "currentHouseholdIncome",
    "avgHouseholdIncome",
    "householdNetworth",
    "pctPrivSecurities",
    "pctIlliquidSecurities",
    "pctLiquidSecurities",
    "pctRealEstate",
];

/// The digits of a JSON number with an integral value (`2.0`, `2e0`: `2`), read as a decimal
/// from the number's own text (no float involved); `None` for a fraction.
fn integral_text(n: &serde_json::Number) -> Option<String> {
    let text = n.to_string();
    let exact = text
        .parse::<rust_decimal::Decimal>()
        .or_else(|_| rust_decimal::Decimal::from_scientific(&text))
        .ok()?;
    exact.fract().is_zero().then(|| exact.normalize().to_string())
}

/// Renders a JSON scalar as the string a form would have carried. A boolean is its word, which
/// every flag parameter takes and no number or ID parses (`true` is not the amount 1).
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Params {
    /// Parameters from the query string alone.
    pub fn from_query(query: Option<&str>) -> Result<Self, ApiError> {
        let query = decode_form(query.unwrap_or("").as_bytes()).map_err(ApiError::Malformed)?;
        let mut p = Params::default();
        for (k, v) in &query {
            p.map.insert(k.clone(), Value::String(v.clone()));
        }
        p.query = query;
        Ok(p)
    }

    /// Adds the body's parameters, decoded according to its content type.
    pub async fn add_body(&mut self, content_type: Option<&str>, body: Bytes) -> Result<(), ApiError> {
        if body.is_empty() {
            return Ok(());
        }
        let ct = content_type.unwrap_or("").to_ascii_lowercase();
        if ct.starts_with("application/json") || ct.ends_with("+json") {
            let v: Value =
                serde_json::from_slice(&body).map_err(|e| ApiError::Malformed(format!("invalid JSON: {e}")))?;
            let Value::Object(obj) = v else {
                return Err(ApiError::Malformed("the JSON body must be an object".into()));
            };
            self.body_keys.extend(obj.keys().cloned());
            self.map.extend(obj);
        } else if ct.starts_with("multipart/form-data") {
            self.add_multipart(content_type.unwrap_or(""), body).await?;
        } else {
            for (k, v) in decode_form(&body).map_err(ApiError::Malformed)? {
                self.body_keys.push(k.clone());
                self.map.insert(k, Value::String(v));
            }
        }
        Ok(())
    }

    async fn add_multipart(&mut self, content_type: &str, body: Bytes) -> Result<(), ApiError> {
        let bad = |e: multer::Error| ApiError::Malformed(format!("invalid multipart body: {e}"));
        let boundary = multer::parse_boundary(content_type).map_err(bad)?;
        let stream = futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(body) });
        let mut mp = multer::Multipart::new(stream, boundary);
        while let Some(field) = mp.next_field().await.map_err(bad)? {
            let name = field.name().unwrap_or("").to_owned();
            match field.file_name().map(str::to_owned) {
                Some(file_name) => {
                    let content_type = field.content_type().map(|m| m.to_string()).unwrap_or_default();
                    let bytes = field.bytes().await.map_err(bad)?;
                    self.uploads.push(Upload {
                        field: name,
                        file_name,
                        content_type,
                        bytes,
                    });
                }
                None => {
                    let bytes = field.bytes().await.map_err(bad)?;
                    let text = String::from_utf8(bytes.to_vec())
                        .map_err(|_| ApiError::Malformed("multipart field is not valid UTF-8".into()))?;
                    self.body_keys.push(name.clone());
                    self.map.insert(name, Value::String(text));
                }
            }
        }
        Ok(())
    }

    /// Sets a parameter (path parameters of resource routes).
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.map.insert(name.to_owned(), Value::String(value.into()));
    }

    /// The raw value, as sent.
    pub fn value(&self, name: &str) -> Option<&Value> {
        note(name, Read::Any);
        self.map.get(name)
    }

    /// The decoded query-string pairs, in order (list endpoints parse them).
    pub fn query_pairs(&self) -> &[(String, String)] {
        &self.query
    }

    pub fn uploads(&self) -> &[Upload] {
        &self.uploads
    }

    /// The whole map (resource-style JSON bodies).
    pub fn map(&self) -> &Map<String, Value> {
        &self.map
    }

    /// The first of `names` that is present, as text; `106` when it is an array or object,
    /// or holds a NUL character (no record, key or provider takes one).
    pub fn opt(&self, names: &[&str]) -> Result<Option<String>, ApiError> {
        for name in names {
            note(name, Read::Text);
        }
        for name in names {
            match self.map.get(*name) {
                None | Some(Value::Null) => continue,
                Some(Value::Number(n)) if INTEGER_PARAMS.contains(name) => {
                    return Ok(Some(integral_text(n).unwrap_or_else(|| n.to_string())));
                }
                Some(v) => {
                    let text = scalar_text(v).ok_or_else(|| ApiError::invalid(name, "must be a single value"))?;
                    if text.contains('\0') {
                        return Err(ApiError::invalid(name, "must not contain NUL characters"));
                    }
                    return Ok(Some(text));
                }
            }
        }
        Ok(None)
    }

    /// Like [`Params::opt`], but only a value the body set (credentials).
    pub fn body_opt(&self, name: &str) -> Option<String> {
        if !self.body_keys.iter().any(|k| k == name) {
            return None;
        }
        self.opt(&[name]).ok().flatten()
    }

    /// `archiveStatus` (required): `1` or `true` archives, `0` or `false` makes the record
    /// active again.
    pub fn archive_status(&self) -> Result<bool, ApiError> {
        match self.req(&["archiveStatus"])?.trim().to_ascii_lowercase().as_str() {
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            _ => Err(ApiError::invalid("archiveStatus", "must be 1 (archived) or 0 (active)")),
        }
    }

    /// Like [`Params::opt`], empty string when absent.
    pub fn text(&self, names: &[&str]) -> Result<String, ApiError> {
        Ok(self.opt(names)?.unwrap_or_default())
    }

    /// A required parameter (any alias): absent or blank is `106` naming the first name.
    pub fn req(&self, names: &[&str]) -> Result<String, ApiError> {
        match self.opt(names)? {
            Some(v) if !v.trim().is_empty() => Ok(v),
            _ => Err(ApiError::missing(names[0])),
        }
    }

    /// Like [`Params::opt`] for a parameter that must be an integer: a JSON number with an
    /// integral value (`2.0`, `2e0`) is its digits (CONTRACT, "Integral numbers"), so it
    /// parses where the integer `2` does; `2.5` stays `2.5`.
    pub fn integer_text(&self, name: &str) -> Result<Option<String>, ApiError> {
        note(name, Read::Integer);
        if let Some(Value::Number(n)) = self.map.get(name) {
            if let Some(whole) = integral_text(n) {
                return Ok(Some(whole));
            }
        }
        self.opt(&[name])
    }

    /// An optional integer: blank counts as absent, anything else not an integer is `106`.
    pub fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.integer_text(name)? {
            None => Ok(None),
            Some(v) if v.trim().is_empty() => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| ApiError::invalid(name, "Numeric values only")),
        }
    }
}
