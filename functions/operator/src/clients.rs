//! Clients and what the operator sets for them: what they may call, keys, webhook
//! registrations, tokens and encryption, field permissions.

use http::Method;
use serde::Deserialize;
use serde_json::{json, Value};
use shared::auth::{load_client, random_secret, ApiKey, ClientRecord};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::store::{Val, Write};
use shared::tx::Plan;
use shared::webhooks::{registration_key, token_items, token_key};
use shared::{operator_op, Routes};

/// Operator-chosen client IDs: letters, digits, `-` and `_`.
pub fn valid_client_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Client `id`, or `404` (also for an ID no key could hold, such as one with control
/// characters).
pub async fn existing(ctx: &OperatorCtx, id: &str) -> Result<ClientRecord, OpError> {
    if id.is_empty() || id.len() > 256 || id.chars().any(char::is_control) {
        return Err(OpError::NotFound(format!("no client {id}")));
    }
    load_client(ctx.store(), id)
        .await?
        .ok_or_else(|| OpError::NotFound(format!("no client {id}")))
}

/// Changes client `id`'s record with `change` (given `input`) and saves it over the version
/// it was read at, reading again after a concurrent change: no change is ever lost.
async fn change<I, T>(
    ctx: &OperatorCtx,
    id: &str,
    input: I,
    change: fn(&mut ClientRecord, &I) -> Result<T, OpError>,
) -> Result<T, OpError>
where
    I: Send + Sync + 'static,
    T: Send + 'static,
{
    let client_ctx = ctx.for_client(id, "operator").await?;
    let owned = id.to_owned();
    let answer = client_ctx
        .transact(async move |c, _| {
            let Some(mut rec) = load_client(c.store(), &owned).await? else {
                return Ok(Plan::answer(Err(OpError::NotFound(format!("no client {owned}")))));
            };
            Ok(match change(&mut rec, &input) {
                Ok(answer) => Plan::new(vec![rec.save()], Ok(answer)),
                Err(e) => Plan::answer(Err(e)),
            })
        })
        .await??;
    ctx.ports.clients.invalidate(id);
    Ok(answer)
}

/// What the operator sees of a client (never its keys' hashes).
fn view(rec: &ClientRecord) -> Value {
    json!({
        "clientId": rec.id,
        "parentClientId": rec.parent,
        "methods": rec.methods,
        "scopes": rec.scopes,
        "ipAllowlist": rec.ip_allowlist,
        "webhookEncryption": rec.webhook_key.is_some(),
    })
}

fn check_allowlist(entries: &[String]) -> Result<(), OpError> {
    for entry in entries {
        if entry.parse::<ipnet::IpNet>().is_err() && entry.parse::<std::net::IpAddr>().is_err() {
            return Err(OpError::BadRequest(format!(
                "ipAllowlist: {entry} is not an address or CIDR block"
            )));
        }
    }
    Ok(())
}

/// What a client is granted names only what exists: `*` or operations the service routes
/// (`methods`, as `may_call` compares them) and scopes its resource routes ask for; a
/// misspelt grant would otherwise be stored and quietly match nothing.
fn check_grants(ctx: &OperatorCtx, methods: Option<&[String]>, scopes: Option<&[String]>) -> Result<(), OpError> {
    if let Some(m) = methods
        .unwrap_or_default()
        .iter()
        .find(|m| *m != "*" && !ctx.routes.has_op(m))
    {
        return Err(OpError::BadRequest(format!("methods: no operation is named {m:?}")));
    }
    if let Some(s) = scopes.unwrap_or_default().iter().find(|s| !ctx.routes.knows_scope(s)) {
        return Err(OpError::BadRequest(format!("scopes: no scope is named {s:?}")));
    }
    Ok(())
}

/// CONTRACT gives the sandbox client every method, scope and field from anywhere: the
/// operator narrows other clients only (`rec` as the change would leave it).
fn unless_narrowing_the_sandbox(rec: &ClientRecord) -> Result<(), OpError> {
    if rec.is_sandbox() && !rec.has_every_right() {
        return Err(OpError::Conflict(format!(
            "{} is the sandbox client: it keeps every method, scope and field, from any address",
            rec.id
        )));
    }
    Ok(())
}

fn now(ctx: &OperatorCtx) -> String {
    ctx.ports.clock.now().format("%Y-%m-%d %H:%M:%S").to_string()
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

/// `POST /operator/clients`: a new client and its first key, shown once.
async fn create(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let n: NewClient = req.body()?;
    let id = n.client_id.unwrap_or_else(|| format!("c{}", &random_secret()[..16]));
    if !valid_client_id(&id) {
        return Err(OpError::BadRequest(
            "clientId: letters, digits, '-' and '_' only".into(),
        ));
    }
    check_allowlist(&n.ip_allowlist)?;
    check_grants(&ctx, Some(&n.methods), Some(&n.scopes))?;
    if let Some(parent) = &n.parent_client_id {
        // One level: a parent's webhook tokens are its children's (part 1), so a child of a
        // child would share neither its parent's nor the top client's.
        if existing(&ctx, parent).await?.parent.is_some() {
            return Err(OpError::BadRequest(format!(
                "parentClientId: {parent} is itself a child client; a parent has no parent"
            )));
        }
    }
    let (key, api_key) = ApiKey::generate(now(&ctx));
    let rec = ClientRecord::new(id.clone(), n.parent_client_id, key, n.methods, n.scopes, n.ip_allowlist);
    if !ctx.ports.save_client(&rec).await? {
        return Err(OpError::Conflict(format!("client {id} exists")));
    }
    Ok(OpReply::created(json!({"clientId": id, "apiKey": api_key})))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Patch {
    methods: Option<Vec<String>>,
    scopes: Option<Vec<String>>,
    ip_allowlist: Option<Vec<String>>,
}

/// `PATCH /operator/clients/{clientId}`: what the client may call, with which scopes, from
/// where (omitted keys unchanged).
async fn patch(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let p: Patch = req.body()?;
    check_allowlist(p.ip_allowlist.as_deref().unwrap_or_default())?;
    check_grants(&ctx, p.methods.as_deref(), p.scopes.as_deref())?;
    let rec = change(&ctx, req.param("clientId"), p, |rec, p| {
        if let Some(m) = &p.methods {
            rec.methods.clone_from(m);
        }
        if let Some(s) = &p.scopes {
            rec.scopes.clone_from(s);
        }
        if let Some(ip) = &p.ip_allowlist {
            rec.ip_allowlist.clone_from(ip);
        }
        unless_narrowing_the_sandbox(rec)?;
        Ok(rec.clone())
    })
    .await?;
    Ok(OpReply::ok(view(&rec)))
}

fn key_view(k: &ApiKey) -> Value {
    json!({"keyId": k.key_id, "createdDate": k.created_date, "active": k.active})
}

/// `POST /operator/clients/{clientId}/keys`: another active key, shown once.
async fn add_key(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    req.no_body()?;
    let (key, secret) = ApiKey::generate(now(&ctx));
    let key_id = key.key_id.clone();
    change(&ctx, req.param("clientId"), key, |rec, key| {
        rec.keys.push(key.clone());
        Ok(())
    })
    .await?;
    Ok(OpReply::created(json!({"keyId": key_id, "apiKey": secret})))
}

/// `GET /operator/clients/{clientId}/keys`: every key, active or not, without secrets.
async fn list_keys(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let rec = existing(&ctx, req.param("clientId")).await?;
    let keys: Vec<Value> = rec.keys.iter().map(key_view).collect();
    Ok(OpReply::ok(json!({"keys": keys})))
}

/// `DELETE /operator/clients/{clientId}/keys/{keyId}`: deactivates the key; its next request
/// gets `103` (in another process, once its cached copy of the client expires: 60 s at most).
async fn deactivate_key(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let key_id = req.param("keyId").to_owned();
    let key = change(&ctx, req.param("clientId"), key_id, |rec, key_id| {
        let key = rec
            .keys
            .iter_mut()
            .find(|k| &k.key_id == key_id)
            .ok_or_else(|| OpError::NotFound(format!("no key {key_id}")))?;
        key.active = false;
        Ok(key.clone())
    })
    .await?;
    Ok(OpReply::ok(key_view(&key)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Encryption {
    key: Option<String>,
}

/// `PUT /operator/clients/{clientId}/webhook-encryption`: the AES-256-GCM key (base64 of 32
/// bytes) the client's webhooks are encrypted with, or `null` to send them in clear.
async fn webhook_encryption(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    if req.body.get("key").is_none() {
        return Err(OpError::BadRequest(
            "key: required (null sends webhooks in clear)".into(),
        ));
    }
    let Encryption { key } = req.body()?;
    if let Some(k) = &key {
        shared::webhooks::crypto::parse_key(k).map_err(|why| OpError::BadRequest(format!("key: {why}")))?;
    }
    let rec = change(&ctx, req.param("clientId"), key, |rec, key| {
        rec.webhook_key.clone_from(key);
        Ok(rec.clone())
    })
    .await?;
    Ok(OpReply::ok(view(&rec)))
}

/// `DELETE /operator/clients/{clientId}/webhook-tokens/{token}`: retires a token; webhooks
/// no longer carry it.
async fn retire_token(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client = existing(&ctx, req.param("clientId")).await?;
    let token = req.param("token");
    let items = token_items(ctx.store(), client.token_owner()).await?;
    let Some((key, _)) = items.into_iter().find(|(_, t)| t == token) else {
        return Err(OpError::NotFound("no such webhook token".into()));
    };
    ctx.store().write(vec![Write::Delete { key, cond: None }]).await?;
    Ok(OpReply::ok(json!({"token": token, "retired": true})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Urls {
    urls: Vec<String>,
}

/// `PUT /operator/clients/{clientId}/webhooks/{methodName}`: the URLs a method's webhook
/// goes to (`[]` removes the registration).
async fn put_webhooks(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let (id, method) = (req.param("clientId"), req.param("methodName"));
    let Urls { urls } = req.body()?;
    existing(&ctx, id).await?;
    // Part 1: a webhook carries the name of the endpoint called, so only those are heard.
    if !ctx.routes.has_op(method) {
        return Err(OpError::BadRequest(format!(
            "methodName: no operation is named {method:?}"
        )));
    }
    // The delivery policy, at registration too: production takes https to public hosts only.
    let policy = ctx.ports.env.url_policy();
    for u in &urls {
        if let Err(why) = policy.check(u).await {
            return Err(OpError::BadRequest(format!("{u} cannot receive webhooks: {why}")));
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
    ctx.store().write(vec![write]).await?;
    Ok(OpReply::ok(json!({"clientId": id, "methodName": method, "urls": urls})))
}

/// `POST /operator/clients/{clientId}/webhook-tokens`: a new `X-Webhook-Token`, shared by a
/// parent's children. Each token is its own item: concurrent calls each add theirs.
async fn new_token(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    req.no_body()?;
    let client = existing(&ctx, req.param("clientId")).await?;
    let token = random_secret();
    let now = ctx.ports.clock.now().timestamp_millis();
    let mut item = token_key(client.token_owner(), now).item();
    item.insert("t".into(), Val::S(token.clone()));
    ctx.store().write(vec![Write::Put { item, cond: None }]).await?;
    Ok(OpReply::created(json!({"token": token})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    fields: Vec<String>,
}

/// `PUT /operator/clients/{clientId}/field-permissions`: the fields the client's keys may
/// set (`["*"]`: all).
async fn field_permissions(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let id = req.param("clientId");
    let Fields { fields } = req.body()?;
    let allowed = (!fields.iter().any(|f| f == "*")).then(|| fields.clone());
    change(&ctx, id, allowed, |rec, allowed| {
        rec.field_permissions.clone_from(allowed);
        unless_narrowing_the_sandbox(rec)?;
        Ok(())
    })
    .await?;
    Ok(OpReply::ok(json!({"clientId": id, "fields": fields})))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(Method::POST, "/operator/clients", operator_op!(create))
        .operator(Method::PATCH, "/operator/clients/{clientId}", operator_op!(patch))
        .operator(Method::POST, "/operator/clients/{clientId}/keys", operator_op!(add_key))
        .operator(
            Method::GET,
            "/operator/clients/{clientId}/keys",
            operator_op!(list_keys),
        )
        .operator(
            Method::DELETE,
            "/operator/clients/{clientId}/keys/{keyId}",
            operator_op!(deactivate_key),
        )
        .operator(
            Method::DELETE,
            "/operator/clients/{clientId}/webhook-tokens/{token}",
            operator_op!(retire_token),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/webhook-encryption",
            operator_op!(webhook_encryption),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/webhooks/{methodName}",
            operator_op!(put_webhooks),
        )
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/webhook-tokens",
            operator_op!(new_token),
        )
        .operator(
            Method::PUT,
            "/operator/clients/{clientId}/field-permissions",
            operator_op!(field_permissions),
        )
}
