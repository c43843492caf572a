//! Clients and what the operator sets for them: keys, webhook registrations and tokens,
//! field permissions.

use http::Method;
use serde::Deserialize;
use serde_json::json;
use shared::auth::{hash_key, load_client, random_secret, ClientRecord};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::store::{Cond, Val, Write};
use shared::webhooks::{registration_key, token_key};
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
    for entry in &n.ip_allowlist {
        if entry.parse::<ipnet::IpNet>().is_err() && entry.parse::<std::net::IpAddr>().is_err() {
            return Err(OpError::BadRequest(format!(
                "ipAllowlist: {entry} is not an address or CIDR block"
            )));
        }
    }
    if let Some(parent) = &n.parent_client_id {
        existing(&ctx, parent).await?;
    }
    let api_key = random_secret();
    let key_hash = hash_key(&api_key).to_hex().to_string();
    let rec = ClientRecord::new(
        id.clone(),
        n.parent_client_id,
        key_hash,
        n.methods,
        n.scopes,
        n.ip_allowlist,
    );
    if !ctx.ports.save_client(&rec, Some(Cond::NotExists)).await? {
        return Err(OpError::Conflict(format!("client {id} exists")));
    }
    Ok(OpReply::created(json!({"clientId": id, "apiKey": api_key})))
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
    let mut client = existing(&ctx, id).await?;
    client.field_permissions = if fields.iter().any(|f| f == "*") {
        None
    } else {
        Some(fields.clone())
    };
    ctx.ports.save_client(&client, Some(Cond::Exists)).await?;
    Ok(OpReply::ok(json!({"clientId": id, "fields": fields})))
}

pub fn routes() -> Routes {
    Routes::new()
        .operator(Method::POST, "/operator/clients", operator_op!(create))
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
