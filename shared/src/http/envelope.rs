//! The response envelope: `statusCode` and `statusDesc` strings first on every body, then
//! the operation's keys. Rendered in this one place for successes and failures alike.

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, Style};

/// A successful operation's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub desc: String,
    pub body: Map<String, Value>,
    /// HTTP status (200 unless a resource-style no-op answers 304).
    pub http: u16,
}

impl Reply {
    /// `101` / `Ok`.
    pub fn ok() -> Self {
        Reply {
            desc: "Ok".into(),
            body: Map::new(),
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
    pub fn desc_value(mut self, value: Value) -> Self {
        self.body.insert("statusDesc".to_owned(), value);
        self
    }

    /// Adds a key holding an already built value (moved, not copied).
    pub fn with_value(mut self, key: &str, value: Value) -> Self {
        self.body.insert(key.to_owned(), value);
        self
    }

    /// Adds a key to the body.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.body
            .insert(key.to_owned(), serde_json::to_value(value).unwrap_or(Value::Null));
        self
    }

    pub fn status(mut self, http: u16) -> Self {
        self.http = http;
        self
    }
}

/// The insert-array shape of create responses: `[true, [ {record} ]]`.
pub fn insert_array(record: impl Serialize) -> Value {
    json!([true, [record]])
}

/// Renders a reply as (HTTP status, JSON body).
pub fn render_reply(reply: Reply) -> (u16, Bytes) {
    let mut out = Map::with_capacity(reply.body.len() + 2);
    out.insert("statusCode".into(), Value::String("101".into()));
    out.insert("statusDesc".into(), Value::String(reply.desc));
    out.extend(reply.body);
    (reply.http, to_bytes(&out))
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
