//! The response envelope: `statusCode` and `statusDesc` strings first on every body, then
//! the operation's keys. Rendered in this one place for successes and failures alike.

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, Style};

/// A successful operation's answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub desc: String,
    /// The operation's keys in order; a key added twice keeps its first place.
    body: Vec<(String, Part)>,
    /// HTTP status (200 unless a resource-style no-op answers 304).
    pub http: u16,
}

/// A body key's value: built as JSON, or already serialized (list pages, written straight
/// from their records).
#[derive(Clone, Debug)]
enum Part {
    Value(Value),
    Raw(Box<RawValue>),
}

impl Serialize for Part {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Part::Value(v) => v.serialize(s),
            Part::Raw(r) => r.serialize(s),
        }
    }
}

impl Reply {
    /// `101` / `Ok`.
    pub fn ok() -> Self {
        Reply {
            desc: "Ok".into(),
            body: Vec::new(),
            http: 200,
        }
    }

    /// Replaces `statusDesc`.
    pub fn desc(mut self, desc: impl Into<String>) -> Self {
        self.desc = desc.into();
        self
    }

    /// Makes `statusDesc` a JSON value other than a string (getIssuerAccount answers an
    /// object there): a body key replaces the envelope's key of the same name in place.
    pub fn desc_value(self, value: Value) -> Self {
        self.with_value("statusDesc", value)
    }

    /// Adds a key holding an already built value (moved, not copied).
    pub fn with_value(self, key: &str, value: Value) -> Self {
        self.put(key, Part::Value(value))
    }

    /// Adds a key to the body.
    pub fn with(self, key: &str, value: impl Serialize) -> Self {
        self.with_value(key, serde_json::to_value(value).unwrap_or(Value::Null))
    }

    /// Adds a key holding JSON already serialized.
    pub fn with_raw(self, key: &str, value: Box<RawValue>) -> Self {
        self.put(key, Part::Raw(value))
    }

    pub fn status(mut self, http: u16) -> Self {
        self.http = http;
        self
    }

    /// The response record, for the webhook of a method part 1's table does not list
    /// (CONTRACT, "Webhook payloads"): key by key, an object's fields, the one record an array
    /// holds (part 1's `[true, [record]]` included), or else the key with its value.
    pub fn record(&self) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, part) in &self.body {
            let value = match part {
                Part::Value(v) => v.clone(),
                Part::Raw(r) => serde_json::from_str(r.get()).unwrap_or(Value::Null),
            };
            let mut objects = Vec::new();
            collect_objects(&value, &mut objects);
            let record = match (&value, objects.as_slice()) {
                (Value::Object(o), _) => Some(o),
                (Value::Array(_), [o]) => Some(*o),
                _ => None,
            };
            match record {
                Some(o) => {
                    for (k, v) in o.iter() {
                        out.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                None => {
                    out.entry(key.clone()).or_insert(value);
                }
            }
        }
        out
    }

    fn put(mut self, key: &str, part: Part) -> Self {
        match self.body.iter_mut().find(|(k, _)| k == key) {
            Some((_, old)) => *old = part,
            None => self.body.push((key.to_owned(), part)),
        }
        self
    }
}

/// The objects an array holds, nested arrays included.
fn collect_objects<'a>(v: &'a Value, out: &mut Vec<&'a Map<String, Value>>) {
    match v {
        Value::Object(o) => out.push(o),
        Value::Array(items) => items.iter().for_each(|i| collect_objects(i, out)),
        _ => {}
    }
}

/// The insert-array shape of create responses: `[true, [ {record} ]]`.
pub fn insert_array(record: impl Serialize) -> Value {
    json!([true, [record]])
}

/// Renders a reply as (HTTP status, JSON body): the envelope's keys first (a body key of
/// the same name in their place), then the body's.
pub fn render_reply(reply: Reply) -> (u16, Bytes) {
    struct Body<'a>(&'a Reply);
    impl Serialize for Body<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let body = &self.0.body;
            let own = |key: &str| body.iter().find(|(k, _)| k == key).map(|(_, v)| v);
            let mut map = s.serialize_map(None)?;
            match own("statusCode") {
                Some(v) => map.serialize_entry("statusCode", v)?,
                None => map.serialize_entry("statusCode", "101")?,
            }
            match own("statusDesc") {
                Some(v) => map.serialize_entry("statusDesc", v)?,
                None => map.serialize_entry("statusDesc", &self.0.desc)?,
            }
            for (k, v) in body.iter().filter(|(k, _)| k != "statusCode" && k != "statusDesc") {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
    }
    (
        reply.http,
        Bytes::from(serde_json::to_vec(&Body(&reply)).unwrap_or_default()),
    )
}

/// Renders an error in the given style; `request_id` is the only detail of a `1500`.
pub fn render_error(err: &ApiError, style: Style, request_id: &str) -> (u16, Bytes) {
    let mut out = Map::with_capacity(3);
    out.insert("statusCode".into(), Value::String(err.code_for(style).into()));
    let desc = match err {
        ApiError::Internal(_) => format!("Internal error (request {request_id})"),
        e => e.desc(),
    };
    out.insert("statusDesc".into(), Value::String(desc));
    if let Some(detail) = err.detail() {
        out.insert("Error(s)".into(), Value::String(detail));
    }
    if let ApiError::CodedBody { body, .. } = err {
        out.extend(body.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    (err.http_status(style), to_bytes(&out))
}

fn to_bytes(v: &Map<String, Value>) -> Bytes {
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}
