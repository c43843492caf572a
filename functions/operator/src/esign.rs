//! The operator's e-signature sandbox endpoints: a client's
//! templates (the "connected e-signature account"), and the signer's side of envelopes
//! (sign, decline, void), which a real provider would report on its own.
//!
//! | endpoint | body | answer |
//! |---|---|---|
//! | `GET /operator/clients/{clientId}/esign-templates` | none | 200 `{clientId, connected, templates}` |
//! | `PUT /operator/clients/{clientId}/esign-templates` | `{"templates": [{"templateId"?, "name", "description"?, "shared"?, "pageCount"?, "folderName"?}]}` | 200 as GET; connects the account, replaces its templates |
//! | `DELETE /operator/clients/{clientId}/esign-templates` | none | 200 as GET; disconnects the account |
//! | `POST /operator/clients/{clientId}/esign/envelopes` | `{"templateIds", "signers": [{"name", "email", "role"?}], "reference"?, "send"?}` | 201 the envelope (200 when `reference` named one already) |
//! | `GET /operator/clients/{clientId}/esign/envelopes/{documentKey}` | none | 200 the envelope |
//! | `POST /operator/clients/{clientId}/esign/envelopes/{documentKey}/{send\|sign\|decline\|void}` | `{"reason"?}` | 200 the envelope with `previousStatus` and `changed`; 409 when the move is not allowed |

use http::Method;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use shared::esign::{self, Action, ChangeError, Purpose, OPERATOR_PURPOSE};
use shared::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use shared::providers::esign::{
    sandbox_template, ESignError, EnvelopeRequest, SandboxAccount, SandboxESign, Signer, Template,
};
use shared::{operator_op, ApiError, Plan, Routes};

use crate::clients::existing;

/// Most templates an account holds.
pub const MAX_TEMPLATES: usize = 100;

/// A client refusal of the e-signature port, as the operator sees it: `400`.
fn api(e: ApiError) -> OpError {
    match e {
        ApiError::Internal(cause) => OpError::Internal(cause),
        other => OpError::BadRequest(other.desc()),
    }
}

fn provider_err(e: ESignError) -> OpError {
    match e {
        ESignError::Provider(_) => OpError::internal_from("e-signature provider failed", e),
        ESignError::NoAccount => OpError::Conflict(e.to_string()),
        other => OpError::BadRequest(other.to_string()),
    }
}

fn account_view(client: &str, account: &SandboxAccount) -> Value {
    json!({"clientId": client, "connected": account.connected, "templates": account.templates})
}

/// `GET /operator/clients/{clientId}/esign-templates`.
async fn get_templates(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client = req.param("clientId");
    existing(&ctx, client).await?;
    let account = SandboxESign::new(ctx.ports.store.clone())
        .account(client)
        .await
        .map_err(provider_err)?;
    Ok(OpReply::ok(account_view(client, &account)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TemplateInput {
    template_id: Option<String>,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    shared: bool,
    page_count: Option<u32>,
    folder_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplatesBody {
    templates: Vec<TemplateInput>,
}

/// A template ID the operator chooses: 1 to 64 letters, digits, `-` or `_`, never `--`
/// (clients send `<templateId>--<templateName>`).
fn valid_template_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && !id.contains("--")
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `PUT /operator/clients/{clientId}/esign-templates`: connects the client's sandbox account
/// and replaces its templates (`[]`: connected, no templates). A template without
/// `templateId` gets one derived from the client and its name; one whose ID and content are
/// unchanged keeps its dates. Every template is checked before anything is written.
async fn put_templates(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client = req.param("clientId");
    let TemplatesBody { templates } = req.body()?;
    if templates.len() > MAX_TEMPLATES {
        return Err(OpError::BadRequest(format!("templates: at most {MAX_TEMPLATES}")));
    }
    existing(&ctx, client).await?;
    let sandbox = SandboxESign::new(ctx.ports.store.clone());
    let before = sandbox.account(client).await.map_err(provider_err)?;
    // Providers write seven fractional digits (`2024-01-02T00:00:00.0000000Z`).
    let now = format!("{}0Z", ctx.ports.clock.now().format("%Y-%m-%dT%H:%M:%S%.6f"));
    let mut out = Vec::with_capacity(templates.len());
    for (i, input) in templates.into_iter().enumerate() {
        let name = input.name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(OpError::BadRequest(format!("templates[{i}].name: 1 to 200 characters")));
        }
        if let Some(id) = &input.template_id {
            if !valid_template_id(id) {
                return Err(OpError::BadRequest(format!(
                    "templates[{i}].templateId: 1 to 64 letters, digits, '-' or '_', no '--'"
                )));
            }
        }
        if input.page_count == Some(0) {
            return Err(OpError::BadRequest(format!("templates[{i}].pageCount: at least 1")));
        }
        let mut t = sandbox_template(client, input.template_id.as_deref(), name);
        if out.iter().any(|o: &Template| o.id == t.id) {
            return Err(OpError::BadRequest(format!(
                "templates[{i}]: templateId {} appears twice",
                t.id
            )));
        }
        t.description = input.description;
        t.shared = input.shared.to_string();
        t.page_count = input.page_count.unwrap_or(1);
        t.folder_name = input.folder_name.unwrap_or_else(|| "Templates".into());
        match before.templates.iter().find(|b| b.id == t.id) {
            Some(b) => {
                t.created.clone_from(&b.created);
                let mut same = t.clone();
                same.last_modified.clone_from(&b.last_modified);
                t.last_modified = if same == *b {
                    b.last_modified.clone()
                } else {
                    now.clone()
                };
            }
            None => {
                t.created.clone_from(&now);
                t.last_modified.clone_from(&now);
            }
        }
        out.push(t);
    }
    let account = SandboxAccount {
        connected: true,
        templates: out,
    };
    ctx.store()
        .write(vec![SandboxESign::account_write(client, &account)])
        .await?;
    Ok(OpReply::ok(account_view(client, &account)))
}

/// `DELETE /operator/clients/{clientId}/esign-templates`: disconnects the client's account
/// (its templates are forgotten; `PUT` connects it again).
async fn disconnect(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client = req.param("clientId");
    existing(&ctx, client).await?;
    let account = SandboxAccount {
        connected: false,
        templates: Vec::new(),
    };
    ctx.store()
        .write(vec![SandboxESign::account_write(client, &account)])
        .await?;
    Ok(OpReply::ok(account_view(client, &account)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewEnvelope {
    template_ids: Vec<String>,
    signers: Vec<Signer>,
    reference: Option<String>,
    send: Option<bool>,
}

fn envelope_answer(client: &str, envelope: &esign::Envelope, extra: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    m.insert("clientId".into(), Value::from(client));
    if let Value::Object(view) = envelope.view() {
        m.extend(view);
    }
    for (k, v) in extra {
        m.insert((*k).to_owned(), v.clone());
    }
    Value::Object(m)
}

/// `106` from the e-signature side (no such template, no signer) is a conflict with the
/// client's account here.
fn envelope_err(e: ApiError) -> OpError {
    match e {
        ApiError::Coded { code: "106", desc, .. } => OpError::Conflict(desc),
        e => api(e),
    }
}

/// `POST /operator/clients/{clientId}/esign/envelopes`: sends templates of the client's
/// account to signers, as the platform does for a trade (purpose `operator`: no trade
/// changes with it). `reference` defaults to a new unique one; `send` false keeps a draft.
/// A reference already sent answers its envelope (200).
async fn create_envelope(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let client = req.param("clientId").to_owned();
    let b: NewEnvelope = req.body()?;
    let ctx = octx.for_client(&client, "esign").await?;
    let reference = b
        .reference
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(shared::ids::unique);
    let request = EnvelopeRequest {
        reference: reference.clone(),
        template_ids: b.template_ids,
        signers: b.signers,
    };
    let send = b.send.unwrap_or(true);
    let (existed, envelope) = ctx
        .transact(async move |ctx, _| {
            let provider = esign::provider(&ctx);
            let existed = esign::envelope_for_reference(ctx.store(), ctx.client_id(), &reference)
                .await?
                .is_some();
            let purpose = Purpose::new(OPERATOR_PURPOSE, &reference);
            let (envelope, writes) = esign::create_envelope(&ctx, &provider, &request, purpose, send).await?;
            Ok(Plan::new(writes, (existed, envelope)))
        })
        .await
        .map_err(envelope_err)?;
    let answer = envelope_answer(&client, &envelope, &[]);
    Ok(if existed {
        OpReply::ok(answer)
    } else {
        OpReply::created(answer)
    })
}

/// `GET /operator/clients/{clientId}/esign/envelopes/{documentKey}`.
async fn get_envelope(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let (client, key) = (req.param("clientId"), req.param("documentKey"));
    existing(&ctx, client).await?;
    let stored = esign::load_envelope(ctx.store(), client, key)
        .await
        .map_err(api)?
        .ok_or_else(|| OpError::NotFound(format!("no envelope {key} of client {client}")))?;
    Ok(OpReply::ok(envelope_answer(client, &stored.rec, &[])))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ActionBody {
    #[serde(default)]
    reason: String,
}

/// `POST /operator/clients/{clientId}/esign/envelopes/{documentKey}/{send|sign|decline|void}`:
/// the signer's (or sender's) move, committed with what it means for the envelope's purpose
/// (the effect its group registered) and its webhooks. Repeating the current status answers
/// 200 with `changed: false`; a move a status does not allow is 409.
async fn act(octx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
    let (client, key, action) = (req.param("clientId"), req.param("documentKey"), req.param("action"));
    let action = Action::parse(action)
        .ok_or_else(|| OpError::NotFound(format!("no envelope action {action} (send, sign, decline or void)")))?;
    let ActionBody { reason } = req.body()?;
    let ctx = octx.for_client(client, "esign").await?;
    match esign::change_status(&ctx, octx.routes.effects(), key, action, &reason).await {
        Ok(t) => Ok(OpReply::ok(envelope_answer(
            client,
            &t.envelope,
            &[
                ("previousStatus", Value::from(t.before.as_str())),
                ("changed", Value::from(t.changed)),
            ],
        ))),
        Err(ChangeError::UnknownEnvelope(_)) => Err(OpError::NotFound(format!("no envelope {key} of client {client}"))),
        Err(e @ ChangeError::NotAllowed { .. }) => Err(OpError::Conflict(e.to_string())),
        Err(ChangeError::Api(e)) => Err(envelope_err(e)),
    }
}

pub fn routes() -> Routes {
    const TEMPLATES: &str = "/operator/clients/{clientId}/esign-templates";
    Routes::new()
        .operator(Method::GET, TEMPLATES, operator_op!(get_templates))
        .operator(Method::PUT, TEMPLATES, operator_op!(put_templates))
        .operator(Method::DELETE, TEMPLATES, operator_op!(disconnect))
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/esign/envelopes",
            operator_op!(create_envelope),
        )
        .operator(
            Method::GET,
            "/operator/clients/{clientId}/esign/envelopes/{documentKey}",
            operator_op!(get_envelope),
        )
        .operator(
            Method::POST,
            "/operator/clients/{clientId}/esign/envelopes/{documentKey}/{action}",
            operator_op!(act),
        )
}
