//! The operator API (`/operator/...`): clients, keys, webhook registrations and tokens,
//! the flag lists of SSNs and email addresses that cannot be used, and reviews
//! (accreditation requests, manual KYC/AML requests: `crate::reviews`).
//! JSON in and out, `Authorization: Bearer <operator token>`. In AWS it is its own function
//! behind IAM authorization; client keys never reach it.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Response};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::{App, OperatorAccess};
use crate::auth::{hash_key, random_secret, ClientRecord};
use crate::error::ApiError;
use crate::http::RawRequest;
use crate::model::flags::{FlagKind, VALUE_ATTR};
use crate::records::flags::FlagItems;
use crate::reviews::{self, Committed};
use crate::store::{Cond, Index, Item, Query, Val, Write, MAX_TRANSACTION_WRITES};
use crate::webhooks::{registration_key, tokens_key, Envelope};

struct OpError(u16, String);

impl From<ApiError> for OpError {
    fn from(e: ApiError) -> Self {
        OpError(500, e.desc())
    }
}
impl From<crate::store::StoreError> for OpError {
    fn from(e: crate::store::StoreError) -> Self {
        tracing::error!(error = %e, "operator store failure");
        OpError(500, "internal error".into())
    }
}

fn respond(status: u16, body: Value) -> Response<Bytes> {
    let mut r = Response::new(Bytes::from(body.to_string()));
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn authorized(app: &App, req: &RawRequest) -> bool {
    let expected = match &app.operator {
        OperatorAccess::Trusted => return true,
        OperatorAccess::Token(t) => t,
        OperatorAccess::Disabled => return false,
    };
    let presented = req
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    // Hash both sides so the comparison is constant-time whatever their lengths.
    presented.is_some_and(|t| hash_key(t) == hash_key(expected))
}

/// Handles an operator request: its response, and the webhooks a successful one fired (the
/// reviews fire their methods' webhooks), to hand over once the response is written.
pub async fn handle(app: &Arc<App>, req: &RawRequest, path: &str) -> (Response<Bytes>, Vec<Envelope>) {
    let committed = Committed::default();
    let response = respond_to(app, req, path, &committed).await;
    let events = if response.status().is_success() {
        std::mem::take(&mut *committed.lock().unwrap_or_else(|e| e.into_inner()))
    } else {
        Vec::new()
    };
    (response, events)
}

async fn respond_to(app: &Arc<App>, req: &RawRequest, path: &str, committed: &Committed) -> Response<Bytes> {
    if app.operator == OperatorAccess::Disabled {
        return respond(404, json!({"error": "not found"}));
    }
    if !authorized(app, req) {
        return respond(401, json!({"error": "invalid operator token"}));
    }
    let body: Value = match &req.body {
        Ok(b) if b.is_empty() => json!({}),
        Ok(b) => match serde_json::from_slice(b) {
            Ok(v) => v,
            Err(e) => return respond(400, json!({"error": format!("invalid JSON: {e}")})),
        },
        Err(limit) => return respond(413, json!({"error": format!("body over {limit} bytes")})),
    };
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let result = match (&req.method, parts.as_slice()) {
        (&Method::POST, ["operator", "clients"]) => create_client(app, body).await,
        (&Method::PUT, ["operator", "clients", id, "webhooks", method]) => put_webhooks(app, id, method, body).await,
        (&Method::POST, ["operator", "clients", id, "webhook-tokens"]) => new_token(app, id).await,
        (&Method::PUT, ["operator", "clients", id, "field-permissions"]) => field_permissions(app, id, body).await,
        (m, ["operator", "flags", kind]) => flags(app, m, kind, body).await,
        (&Method::POST, ["operator", "clients", id, "ai-requests", request, "review"]) => {
            reviews::operator_ai_review(app, id, request, body, committed)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (&Method::POST, ["operator", "clients", id, "kyc-requests", request, "review"]) => {
            reviews::operator_kyc_review(app, id, request, body, committed)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (&Method::POST, ["operator", "clients", id, "offerings", offering, "approve"]) => {
            crate::operator_offerings::approve(app, id, offering)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (&Method::PUT, ["operator", "clients", id, "offerings", offering, "escrow-account"]) => {
            crate::operator_offerings::link_escrow(app, id, offering, body)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (m, ["operator", "clients", id, "esign-templates"]) => esign_templates(app, m, id, body).await,
        (&Method::POST, ["operator", "clients", id, "esign", "envelopes"]) => {
            crate::operator_esign::create_envelope(app, id, body, committed)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (&Method::GET, ["operator", "clients", id, "esign", "envelopes", key]) => {
            crate::operator_esign::get_envelope(app, id, key)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (&Method::POST, ["operator", "clients", id, "esign", "envelopes", key, action]) => {
            crate::operator_esign::act(app, id, key, action, body, committed)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        (&Method::PUT, ["operator", "clients", id, "custodian-settings"]) => {
            crate::operator_offerings::custodian_settings(app, id, body)
                .await
                .map_err(|(status, msg)| OpError(status, msg))
        }
        _ => Err(OpError(404, format!("no operator endpoint {} {path}", req.method))),
    };
    match result {
        Ok((status, v)) => respond(status, v),
        Err(OpError(status, msg)) => respond(status, json!({"error": msg})),
    }
}

type OpResult = Result<(u16, Value), OpError>;

/// A client's sandbox e-signature account (`crate::operator_esign`): `GET` shows it, `PUT`
/// connects it with the templates sent, `DELETE` disconnects it.
async fn esign_templates(app: &App, method: &Method, id: &str, body: Value) -> OpResult {
    let answer = match *method {
        Method::GET => crate::operator_esign::get_templates(app, id).await,
        Method::PUT => crate::operator_esign::put_templates(app, id, body).await,
        Method::DELETE => crate::operator_esign::disconnect(app, id).await,
        _ => Err((405, format!("{method} is not allowed on esign-templates"))),
    };
    answer.map_err(|(status, msg)| OpError(status, msg))
}

fn parse<T: for<'de> Deserialize<'de>>(body: Value) -> Result<T, OpError> {
    serde_json::from_value(body).map_err(|e| OpError(400, format!("invalid body: {e}")))
}

/// Operator-chosen client IDs: letters, digits, `-` and `_`.
pub fn valid_client_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn client_item(rec: &ClientRecord) -> Item {
    let mut item = ClientRecord::key(&rec.id).item();
    item.insert("d".into(), Val::S(serde_json::to_string(rec).unwrap_or_default()));
    item
}

/// Writes a client record, new or replaced.
pub async fn save_client(app: &App, rec: &ClientRecord, cond: Option<Cond>) -> Result<(), crate::store::StoreError> {
    app.store
        .write(vec![Write::Put {
            item: client_item(rec),
            cond,
        }])
        .await?;
    app.clients.invalidate(&rec.id);
    Ok(())
}

async fn load(app: &App, id: &str) -> Result<ClientRecord, OpError> {
    crate::auth::load_client(app.store.as_ref(), id)
        .await?
        .ok_or_else(|| OpError(404, format!("no client {id}")))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewClient {
    client_id: Option<String>,
    parent_client_id: Option<String>,
    #[serde(default = "all")]
    methods: Vec<String>,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    ip_allowlist: Vec<String>,
}

fn all() -> Vec<String> {
    vec!["*".into()]
}

async fn create_client(app: &App, body: Value) -> OpResult {
    let n: NewClient = parse(body)?;
    let id = n.client_id.unwrap_or_else(|| format!("c{}", &random_secret()[..16]));
    if !valid_client_id(&id) {
        return Err(OpError(400, "clientId: letters, digits, '-' and '_' only".into()));
    }
    for entry in &n.ip_allowlist {
        if entry.parse::<ipnet::IpNet>().is_err() && entry.parse::<std::net::IpAddr>().is_err() {
            return Err(OpError(
                400,
                format!("ipAllowlist: {entry} is not an address or CIDR block"),
            ));
        }
    }
    if let Some(parent) = &n.parent_client_id {
        load(app, parent).await?;
    }
    let api_key = random_secret();
    let rec = ClientRecord {
        id: id.clone(),
        parent: n.parent_client_id,
        key_hashes: vec![hash_key(&api_key).to_hex().to_string()],
        methods: n.methods,
        scopes: n.scopes,
        ip_allowlist: n.ip_allowlist,
        field_permissions: None,
        ..ClientRecord::default()
    };
    match save_client(app, &rec, Some(Cond::NotExists)).await {
        Ok(()) => Ok((201, json!({"clientId": id, "apiKey": api_key}))),
        Err(crate::store::StoreError::ConditionFailed { .. }) => Err(OpError(409, format!("client {id} exists"))),
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Urls {
    urls: Vec<String>,
}

async fn put_webhooks(app: &App, id: &str, method: &str, body: Value) -> OpResult {
    let Urls { urls } = parse(body)?;
    load(app, id).await?;
    for u in &urls {
        let ok = reqwest::Url::parse(u).is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.host().is_some());
        if !ok {
            return Err(OpError(400, format!("{u} is not an http(s) URL")));
        }
    }
    let key = registration_key(id, method);
    let write = if urls.is_empty() {
        Write::Delete { key, cond: None }
    } else {
        let mut item = key.item();
        item.insert("d".into(), Val::S(serde_json::to_string(&urls).unwrap_or_default()));
        Write::Put { item, cond: None }
    };
    app.store.write(vec![write]).await?;
    Ok((200, json!({"clientId": id, "methodName": method, "urls": urls})))
}

async fn new_token(app: &App, id: &str) -> OpResult {
    let client = load(app, id).await?;
    let key = tokens_key(client.token_owner());
    let token = random_secret();
    let mut tokens: Vec<String> = match app.store.get(&key).await? {
        Some(item) => item
            .get("d")
            .and_then(Val::as_str)
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default(),
        None => Vec::new(),
    };
    tokens.push(token.clone());
    let mut item = key.item();
    item.insert("d".into(), Val::S(serde_json::to_string(&tokens).unwrap_or_default()));
    app.store.write(vec![Write::Put { item, cond: None }]).await?;
    Ok((201, json!({"token": token})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    fields: Vec<String>,
}

async fn field_permissions(app: &App, id: &str, body: Value) -> OpResult {
    let Fields { fields } = parse(body)?;
    let mut client = load(app, id).await?;
    client.field_permissions = if fields.iter().any(|f| f == "*") {
        None
    } else {
        Some(fields.clone())
    };
    save_client(app, &client, Some(Cond::Exists)).await?;
    Ok((200, json!({"clientId": id, "fields": fields})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Values {
    values: Vec<String>,
}

/// The normalized values stored on a flag list.
async fn flag_values(app: &App, kind: FlagKind) -> Result<Vec<String>, OpError> {
    let mut q = Query::new(Index::Table, kind.partition());
    let mut out = Vec::new();
    loop {
        let page = app.store.query(&q).await?;
        out.extend(
            page.items
                .iter()
                .filter_map(|i| i.get(VALUE_ATTR).and_then(Val::as_str).map(str::to_owned)),
        );
        match page.next {
            Some(next) => q.start = Some(next),
            None => break,
        }
    }
    out.sort();
    Ok(out)
}

/// The flag lists (`775` SSNs, `776` email addresses), service-wide: `GET` lists,
/// `PUT` replaces the list, `POST` adds values, `DELETE` removes them; bodies are
/// `{"values": [...]}`. Every value is checked before anything is written.
async fn flags(app: &App, method: &Method, kind: &str, body: Value) -> OpResult {
    let kind = FlagKind::parse(kind).ok_or_else(|| OpError(404, format!("no flag list {kind} (ssn or email)")))?;
    if method == Method::GET {
        return Ok((
            200,
            json!({"kind": kind.name(), "values": flag_values(app, kind).await?}),
        ));
    }
    if !matches!(*method, Method::PUT | Method::POST | Method::DELETE) {
        return Err(OpError(405, format!("{method} is not allowed on flag lists")));
    }
    let Values { values } = parse(body)?;
    let mut wanted = std::collections::BTreeSet::new();
    for v in &values {
        wanted.insert(kind.normalize_for_list(v).map_err(|e| OpError(400, e))?);
    }
    let (add, remove): (Vec<String>, Vec<String>) = match *method {
        Method::POST => (wanted.into_iter().collect(), Vec::new()),
        Method::DELETE => (Vec::new(), wanted.into_iter().collect()),
        _ => {
            let current = flag_values(app, kind).await?;
            let stale = current.iter().filter(|c| !wanted.contains(*c)).cloned().collect();
            (wanted.into_iter().collect(), stale)
        }
    };
    let mut writes: Vec<Write> = remove
        .iter()
        .map(|v| Write::Delete {
            key: kind.key(v),
            cond: None,
        })
        .collect();
    writes.extend(add.iter().map(|v| {
        let mut item = kind.key(v).item();
        item.insert(VALUE_ATTR.into(), Val::S(v.clone()));
        Write::Put { item, cond: None }
    }));
    for chunk in writes.chunks(MAX_TRANSACTION_WRITES) {
        app.store.write(chunk.to_vec()).await?;
    }
    Ok((
        200,
        json!({"kind": kind.name(), "values": flag_values(app, kind).await?}),
    ))
}

/// Creates or refreshes the local API's sandbox client: every method and scope, and the
/// given key among its keys.
pub async fn ensure_dev_client(app: &App, id: &str, api_key: &str) -> Result<(), crate::store::StoreError> {
    let hash = hash_key(api_key).to_hex().to_string();
    let existing = crate::auth::load_client(app.store.as_ref(), id).await.ok().flatten();
    let mut rec = existing.unwrap_or_else(|| ClientRecord {
        id: id.to_owned(),
        parent: None,
        key_hashes: Vec::new(),
        methods: all(),
        scopes: all(),
        ip_allowlist: Vec::new(),
        field_permissions: None,
        ..ClientRecord::default()
    });
    if rec.key_hashes.contains(&hash) {
        return Ok(());
    }
    rec.key_hashes.push(hash);
    save_client(app, &rec, None).await
}
