//! The operator's e-signature sandbox endpoints, called from `operator.rs`: a client's
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

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::app::App;
use crate::error::ApiError;
use crate::esign::{self, Action, ChangeError, Purpose, OPERATOR_PURPOSE};
use crate::providers::esign::{sandbox_template, ESignError, EnvelopeRequest, SandboxAccount, SandboxESign, Signer};
use crate::reviews::{operator_ctx, Committed};

/// An operator answer: HTTP status and JSON body, or HTTP status and message.
pub type OpAnswer = Result<(u16, Value), (u16, String)>;

/// Most templates an account holds.
pub const MAX_TEMPLATES: usize = 100;

fn internal<E: std::fmt::Display>(e: E) -> (u16, String) {
    tracing::error!(error = %e, "operator e-signature endpoint failed");
    (500, "internal error".into())
}

fn api(e: ApiError) -> (u16, String) {
    match e {
        ApiError::Internal(_) => (500, "internal error".into()),
        other => (400, other.desc()),
    }
}

fn provider_err(e: ESignError) -> (u16, String) {
    match e {
        ESignError::Provider(_) => internal(e),
        ESignError::NoAccount => (409, e.to_string()),
        other => (400, other.to_string()),
    }
}

fn parse<T: for<'de> Deserialize<'de>>(body: Value) -> Result<T, (u16, String)> {
    serde_json::from_value(body).map_err(|e| (400, format!("invalid body: {e}")))
}

async fn existing_client(app: &App, client: &str) -> Result<(), (u16, String)> {
    if !crate::operator::valid_client_id(client) {
        return Err((404, format!("no client {client}")));
    }
    match crate::auth::load_client(app.store.as_ref(), client)
        .await
        .map_err(api)?
    {
        Some(_) => Ok(()),
        None => Err((404, format!("no client {client}"))),
    }
}

fn account_view(client: &str, account: &SandboxAccount) -> Value {
    json!({"clientId": client, "connected": account.connected, "templates": account.templates})
}

/// `GET /operator/clients/{clientId}/esign-templates`.
pub async fn get_templates(app: &App, client: &str) -> OpAnswer {
    existing_client(app, client).await?;
    let account = SandboxESign::new(app.store.clone())
        .account(client)
        .await
        .map_err(provider_err)?;
    Ok((200, account_view(client, &account)))
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
pub async fn put_templates(app: &App, client: &str, body: Value) -> OpAnswer {
    let TemplatesBody { templates } = parse(body)?;
    if templates.len() > MAX_TEMPLATES {
        return Err((400, format!("templates: at most {MAX_TEMPLATES}")));
    }
    existing_client(app, client).await?;
    let sandbox = SandboxESign::new(app.store.clone());
    let before = sandbox.account(client).await.map_err(provider_err)?;
    // Providers write seven fractional digits (`2024-01-02T00:00:00.0000000Z`).
    let now = format!("{}0Z", app.clock.now().format("%Y-%m-%dT%H:%M:%S%.6f"));
    let mut out = Vec::with_capacity(templates.len());
    for (i, input) in templates.into_iter().enumerate() {
        let name = input.name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            return Err((400, format!("templates[{i}].name: 1 to 200 characters")));
        }
        if let Some(id) = &input.template_id {
            if !valid_template_id(id) {
                return Err((
                    400,
                    format!("templates[{i}].templateId: 1 to 64 letters, digits, '-' or '_', no '--'"),
                ));
            }
        }
        if input.page_count == Some(0) {
            return Err((400, format!("templates[{i}].pageCount: at least 1")));
        }
        let mut t = sandbox_template(client, input.template_id.as_deref(), name);
        if out.iter().any(|o: &crate::providers::esign::Template| o.id == t.id) {
            return Err((400, format!("templates[{i}]: templateId {} appears twice", t.id)));
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
    app.store
        .write(vec![SandboxESign::account_write(client, &account)])
        .await
        .map_err(internal)?;
    Ok((200, account_view(client, &account)))
}

/// `DELETE /operator/clients/{clientId}/esign-templates`: disconnects the client's account
/// (its templates are forgotten; `PUT` connects it again).
pub async fn disconnect(app: &App, client: &str) -> OpAnswer {
    existing_client(app, client).await?;
    let account = SandboxAccount {
        connected: false,
        templates: Vec::new(),
    };
    app.store
        .write(vec![SandboxESign::account_write(client, &account)])
        .await
        .map_err(internal)?;
    Ok((200, account_view(client, &account)))
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

/// `POST /operator/clients/{clientId}/esign/envelopes`: sends templates of the client's
/// account to signers, as the platform does for a trade (purpose `operator`: no trade
/// changes with it). `reference` defaults to a new unique one; `send` false keeps a draft.
pub async fn create_envelope(app: &Arc<App>, client: &str, body: Value, committed: &Committed) -> OpAnswer {
    let b: NewEnvelope = parse(body)?;
    let ctx = operator_ctx(app, client, "esign", committed).await?;
    let reference = b
        .reference
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(crate::ids::unique);
    let request = EnvelopeRequest {
        reference: reference.clone(),
        template_ids: b.template_ids,
        signers: b.signers,
    };
    let provider = esign::provider(&ctx);
    let existed = esign::envelope_for_reference(ctx.store(), client, &reference)
        .await
        .map_err(api)?
        .is_some();
    let purpose = Purpose::new(OPERATOR_PURPOSE, &reference);
    let (envelope, writes) =
        match esign::create_envelope(&ctx, &provider, &request, purpose, b.send.unwrap_or(true)).await {
            Ok(done) => done,
            Err(ApiError::Coded { code: "106", desc, .. }) => return Err((409, desc)),
            Err(e) => return Err(api(e)),
        };
    match ctx.commit(writes, Vec::new()).await {
        Ok(()) => {}
        Err(crate::store::StoreError::ConditionFailed { .. }) => {
            return Err((
                409,
                format!("reference {reference} is being sent concurrently; try again"),
            ))
        }
        Err(e) => return Err(internal(e)),
    }
    let status = if existed { 200 } else { 201 };
    Ok((status, envelope_answer(client, &envelope, &[])))
}

/// `GET /operator/clients/{clientId}/esign/envelopes/{documentKey}`.
pub async fn get_envelope(app: &App, client: &str, key: &str) -> OpAnswer {
    existing_client(app, client).await?;
    let stored = esign::load_envelope(app.store.as_ref(), client, key)
        .await
        .map_err(api)?
        .ok_or_else(|| (404, format!("no envelope {key} of client {client}")))?;
    Ok((200, envelope_answer(client, &stored.envelope, &[])))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ActionBody {
    #[serde(default)]
    reason: String,
}

/// `POST /operator/clients/{clientId}/esign/envelopes/{documentKey}/{send|sign|decline|void}`:
/// the signer's (or sender's) move, committed with what it means for the envelope's purpose
/// and its webhooks (`esign::status_effects`). Repeating the current status answers 200
/// with `changed: false`; a move a status does not allow is 409.
pub async fn act(
    app: &Arc<App>,
    client: &str,
    key: &str,
    action: &str,
    body: Value,
    committed: &Committed,
) -> OpAnswer {
    let action = Action::parse(action).ok_or_else(|| {
        (
            404,
            format!("no envelope action {action} (send, sign, decline or void)"),
        )
    })?;
    let ActionBody { reason } = parse(body)?;
    let ctx = operator_ctx(app, client, "esign", committed).await?;
    let provider = esign::provider(&ctx);
    match esign::change_status(&ctx, &provider, key, action, &reason).await {
        Ok(t) => Ok((
            200,
            envelope_answer(
                client,
                &t.envelope,
                &[
                    ("previousStatus", Value::from(t.before.as_str())),
                    ("changed", Value::from(t.changed)),
                ],
            ),
        )),
        Err(ChangeError::UnknownEnvelope(_)) => Err((404, format!("no envelope {key} of client {client}"))),
        Err(e @ ChangeError::NotAllowed { .. }) => Err((409, e.to_string())),
        Err(ChangeError::Api(ApiError::Coded { code: "106", desc, .. })) => Err((409, desc)),
        Err(ChangeError::Api(e)) => Err(api(e)),
    }
}
