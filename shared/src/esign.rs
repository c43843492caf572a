//! The platform's side of e-signature: which provider serves a client, the record the
//! platform keeps of every envelope it sent (its templates, signers, purpose and status),
//! and status changes, each committed in one transaction with what the change means for the
//! envelope's purpose ([`Effects`], registered by the group that sends such envelopes).
//!
//! # For the trades group (sendSubscriptionDocument, sendNda, resends)
//!
//! ```text
//! let provider = esign::provider(&ctx);
//! let templates = records::subscription::active(ctx.store(), ctx.client_id(), &offering_id).await?;
//! let req = EnvelopeRequest { reference: format!("trade-{trade_id}-subscription"),
//!                             template_ids: templates.iter().map(|t| t.template_key.clone()).collect(),
//!                             signers: vec![Signer { name, email, role: "Investor".into() }] };
//! let (envelope, writes) = esign::create_envelope(&ctx, &provider, &req,
//!                                                 Purpose::new("subscription", &trade_id), true).await?;
//! // commit `writes` with the trade's own writes (documentKey, esignStatus NOTSIGNED) and webhooks
//! ```
//!
//! Status changes arrive through [`change_status`] (the operator's sandbox actions, or a
//! client's `updateDocuSignStatus`); it runs the effect registered for the envelope's purpose
//! and commits its writes and webhooks with the envelope's new status. The trades group
//! registers `subscription` (the document's status, the trade's `esignStatus` and
//! `updateDocuSignStatus`) and `nda` (the NDA's status and `updateNdaDocuSignStatus`).
//! Voids that belong to a trade's own change (a resend, a cancellation) are built by
//! the trades group's `void_documents` and committed in that change's transaction instead.
//!
//! Envelope records: `<client>#ESIGNENV` / `documentKey`, JSON of [`Envelope`] in `d`, version
//! in `v`; the reference each was sent with: `<client>#ESIGNREF` / reference, `k` = its key.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::ctx::Ctx;
use crate::error::ApiError;
use crate::providers::esign::{ESignError, ESignProvider, EnvelopeRequest, SandboxESign, Signer, Template};
use crate::store::{CmpOp, Cond, Key, Store, Val, Write};
use crate::tx::Plan;
use crate::webhooks::Event;

/// The provider serving a client: the deterministic sandbox (no other provider is
/// integrated yet; a real one goes behind the same port).
pub fn provider(ctx: &Ctx) -> SandboxESign {
    SandboxESign::new(ctx.app.store.clone())
}

/// An envelope's status, as webhooks and trade records carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EsignStatus {
    /// Created, not sent yet (a draft).
    #[serde(rename = "CREATED")]
    Created,
    /// Sent, awaiting the signers.
    #[serde(rename = "NOTSIGNED")]
    NotSigned,
    #[serde(rename = "SIGNED")]
    Signed,
    #[serde(rename = "DECLINED")]
    Declined,
    #[serde(rename = "VOIDED")]
    Voided,
}

impl EsignStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EsignStatus::Created => "CREATED",
            EsignStatus::NotSigned => "NOTSIGNED",
            EsignStatus::Signed => "SIGNED",
            EsignStatus::Declined => "DECLINED",
            EsignStatus::Voided => "VOIDED",
        }
    }

    /// Signed, declined and voided envelopes never change again.
    pub fn is_final(self) -> bool {
        matches!(self, EsignStatus::Signed | EsignStatus::Declined | EsignStatus::Voided)
    }
}

/// What moves an envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A draft goes out: `CREATED` → `NOTSIGNED`.
    Send,
    /// The signers signed: `NOTSIGNED` → `SIGNED`.
    Sign,
    /// A signer declined: `NOTSIGNED` → `DECLINED`.
    Decline,
    /// The sender withdrew it: `CREATED` or `NOTSIGNED` → `VOIDED`.
    Void,
}

impl Action {
    /// `send`, `sign`, `decline` or `void`.
    pub fn parse(s: &str) -> Option<Action> {
        match s {
            "send" => Some(Action::Send),
            "sign" => Some(Action::Sign),
            "decline" => Some(Action::Decline),
            "void" => Some(Action::Void),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Action::Send => "send",
            Action::Sign => "sign",
            Action::Decline => "decline",
            Action::Void => "void",
        }
    }

    pub fn target(self) -> EsignStatus {
        match self {
            Action::Send => EsignStatus::NotSigned,
            Action::Sign => EsignStatus::Signed,
            Action::Decline => EsignStatus::Declined,
            Action::Void => EsignStatus::Voided,
        }
    }

    /// Whether the action applies to an envelope in `from` (the target itself excepted:
    /// repeating an action changes nothing).
    pub fn allowed_from(self, from: EsignStatus) -> bool {
        match self {
            Action::Send => from == EsignStatus::Created,
            Action::Sign | Action::Decline => from == EsignStatus::NotSigned,
            Action::Void => matches!(from, EsignStatus::Created | EsignStatus::NotSigned),
        }
    }
}

/// What an envelope is for: `kind` names the feature (`subscription`, `nda`, `operator`,
/// ...) and `id` its subject (a trade ID, ...). [`Effects`] are looked up by `kind`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purpose {
    pub kind: String,
    pub id: String,
}

impl Purpose {
    pub fn new(kind: &str, id: &str) -> Self {
        Purpose {
            kind: kind.to_owned(),
            id: id.to_owned(),
        }
    }
}

/// The purpose of envelopes the operator sends to try the sandbox.
pub const OPERATOR_PURPOSE: &str = "operator";

/// The platform's record of an envelope it sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub document_key: String,
    pub template_ids: Vec<String>,
    pub signers: Vec<Signer>,
    pub purpose: Purpose,
    pub status: EsignStatus,
    /// Why it was declined or voided (empty otherwise).
    #[serde(default)]
    pub reason: String,
    #[serde(rename = "createdDate")]
    pub created: String,
    #[serde(rename = "updatedDate")]
    pub updated: String,
}

/// An envelope as read, with the version its next write is conditioned on.
pub type StoredEnvelope = crate::records::Stored<Envelope>;

/// Where a client's envelope is recorded.
pub fn envelope_key(client: &str, document_key: &str) -> Key {
    Key::new(format!("{client}#ESIGNENV"), document_key)
}

/// The write that records an envelope: a new one (`before` = `None`, the key must be free)
/// or a change of the version read.
pub fn envelope_write(client: &str, envelope: &Envelope, before: Option<i64>) -> Result<Write, ApiError> {
    let mut item = envelope_key(client, &envelope.document_key).item();
    let json =
        serde_json::to_string(envelope).map_err(|e| ApiError::internal_from("envelope does not serialize", e))?;
    item.insert("d".into(), Val::S(json));
    item.insert("v".into(), Val::from(before.unwrap_or(0) + 1));
    let cond = match before {
        None => Cond::NotExists,
        Some(v) => Cond::Cmp("v".into(), CmpOp::Eq, Val::from(v)),
    };
    Ok(Write::Put { item, cond: Some(cond) })
}

/// A client's envelope, if the platform sent one with this key.
pub async fn load_envelope(
    store: &dyn Store,
    client: &str,
    document_key: &str,
) -> Result<Option<StoredEnvelope>, ApiError> {
    if document_key.is_empty() || document_key.len() > 100 {
        return Ok(None);
    }
    let Some(item) = store.get(&envelope_key(client, document_key)).await? else {
        return Ok(None);
    };
    crate::records::decode(&item, "corrupt envelope record").map(Some)
}

/// The longest envelope `reference`.
pub const MAX_REFERENCE: usize = 200;

/// Where the envelope sent with a reference is found: `<client>#ESIGNREF` / reference,
/// attribute `k` = its `documentKey`.
pub fn reference_key(client: &str, reference: &str) -> Key {
    Key::new(format!("{client}#ESIGNREF"), reference)
}

/// The envelope a client sent with `reference`, if any.
pub async fn envelope_for_reference(
    store: &dyn Store,
    client: &str,
    reference: &str,
) -> Result<Option<StoredEnvelope>, ApiError> {
    if reference.is_empty() || reference.chars().count() > MAX_REFERENCE {
        return Ok(None);
    }
    let Some(item) = store.get(&reference_key(client, reference)).await? else {
        return Ok(None);
    };
    let key = item.get("k").and_then(Val::as_str).unwrap_or("");
    load_envelope(store, client, key).await
}

/// Sends an envelope through the provider and answers the platform's record of it with the
/// writes to commit (with the caller's own writes and webhooks): the envelope and its
/// reference, both conditioned on not existing. `send` false keeps it a draft (`CREATED`);
/// true sends it (`NOTSIGNED`). A reference sent before answers the envelope recorded then
/// and no write, without asking the provider (a retried send never sends twice; two
/// concurrent sends of one reference: one commit fails its condition, and its retry finds
/// the other's envelope).
///
/// Errors: `106` without a connected account, for an unknown template, without a signer, or
/// for a blank reference or one over [`MAX_REFERENCE`] characters (see `ESignError`'s
/// mapping).
pub async fn create_envelope(
    ctx: &Ctx,
    provider: &dyn ESignProvider,
    request: &EnvelopeRequest,
    purpose: Purpose,
    send: bool,
) -> Result<(Envelope, Vec<Write>), ApiError> {
    if request.reference.chars().count() > MAX_REFERENCE {
        return Err(ApiError::invalid(
            "reference",
            format!("at most {MAX_REFERENCE} characters"),
        ));
    }
    if let Some(existing) = envelope_for_reference(ctx.store(), ctx.client_id(), &request.reference).await? {
        return Ok((existing.rec, Vec::new()));
    }
    let key = provider.send(ctx.client_id(), request).await?;
    let now = ctx.now();
    let envelope = Envelope {
        document_key: key,
        template_ids: request.template_ids.clone(),
        signers: request.signers.clone(),
        purpose,
        status: if send {
            EsignStatus::NotSigned
        } else {
            EsignStatus::Created
        },
        reason: String::new(),
        created: now.clone(),
        updated: now,
    };
    let mut marker = reference_key(ctx.client_id(), &request.reference).item();
    marker.insert("k".into(), Val::S(envelope.document_key.clone()));
    let writes = vec![
        envelope_write(ctx.client_id(), &envelope, None)?,
        Write::Put {
            item: marker,
            cond: Some(Cond::NotExists),
        },
    ];
    Ok((envelope, writes))
}

/// Why a status change was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChangeError {
    #[error("no envelope {0}")]
    UnknownEnvelope(String),
    #[error("cannot {action} an envelope that is {from}")]
    NotAllowed { from: &'static str, action: &'static str },
    #[error("{0}")]
    Api(ApiError),
}

impl From<ApiError> for ChangeError {
    fn from(e: ApiError) -> Self {
        ChangeError::Api(e)
    }
}

impl ChangeError {
    /// For a client operation whose parameter `name` named the envelope: `106` (it names no
    /// envelope, or the move is not allowed).
    pub fn for_param(self, name: &str) -> ApiError {
        match self {
            ChangeError::UnknownEnvelope(_) | ChangeError::NotAllowed { .. } => {
                ApiError::invalid(name, self.to_string())
            }
            ChangeError::Api(e) => e,
        }
    }
}

impl From<ChangeError> for ApiError {
    /// For client operations that name the envelope by `documentKey`.
    fn from(e: ChangeError) -> Self {
        e.for_param("documentKey")
    }
}

/// The outcome of [`change_status`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub before: EsignStatus,
    pub envelope: Envelope,
    /// False when the envelope already had the target status (nothing written, no webhook).
    pub changed: bool,
}

/// What one attempt at a status change found.
enum Outcome {
    Moved(Transition),
    Refused(ChangeError),
}

/// Moves an envelope as `action` says and commits, in one transaction, its new status and
/// what the effect registered for its purpose adds (with their webhooks). Repeating the current
/// status changes nothing; a final status (signed, declined, voided) never changes. A void is
/// also sent to the client's provider ([`provider`]), before the commit: a void it refuses
/// commits nothing.
pub async fn change_status(
    ctx: &Ctx,
    effects: &Effects,
    document_key: &str,
    action: Action,
    reason: &str,
) -> Result<Transition, ChangeError> {
    let (effects, key, reason) = (effects.clone(), document_key.to_owned(), reason.trim().to_owned());
    match change(ctx.clone(), effects, key, action, reason).await? {
        Outcome::Moved(t) => Ok(t),
        Outcome::Refused(e) => Err(e),
    }
}

/// [`change_status`] on owned values, as one boxed future: the attempts own what they read.
fn change(
    ctx: Ctx,
    effects: Effects,
    key: String,
    action: Action,
    reason: String,
) -> Pin<Box<dyn Future<Output = Result<Outcome, ApiError>> + Send>> {
    Box::pin(async move {
        ctx.transact(async move |ctx, _| {
            let (key, reason, effects) = (key.clone(), reason.clone(), effects.clone());
            let found = load_envelope(ctx.store(), ctx.client_id(), &key).await?;
            let Some(stored) = found else {
                return Ok(Plan::answer(Outcome::Refused(ChangeError::UnknownEnvelope(key))));
            };
            let before = stored.rec.status;
            if before == action.target() {
                return Ok(Plan::answer(Outcome::Moved(Transition {
                    before,
                    envelope: stored.rec,
                    changed: false,
                })));
            }
            if !action.allowed_from(before) {
                return Ok(Plan::answer(Outcome::Refused(ChangeError::NotAllowed {
                    from: before.as_str(),
                    action: action.name(),
                })));
            }
            let mut after = stored.rec.clone();
            after.status = action.target();
            after.reason.clone_from(&reason);
            after.updated = ctx.now();
            // The effect registered for the envelope's purpose; none: the status alone.
            let (writes, events) = match effects.get(&after.purpose.kind) {
                Some(effect) => effect(ctx.clone(), after.clone()).await?,
                None => (Vec::new(), Vec::new()),
            };
            if action == Action::Void {
                provider(&ctx)
                    .void(ctx.client_id(), &key, &reason)
                    .await
                    .map_err(ApiError::from)?;
            }
            let write = envelope_write(ctx.client_id(), &after, Some(stored.version))?;
            let moved = Transition {
                before,
                envelope: after,
                changed: true,
            };
            Ok(Plan::new(vec![write], Outcome::Moved(moved))
                .writes(writes)
                .events(events))
        })
        .await
    })
}

/// The template an envelope of some purpose is sent with: the one `wanted` names, else the
/// connected account's first in `folder` (`106` when there is none, or no account is
/// connected).
pub async fn template_in_folder(
    ctx: &Ctx,
    provider: &dyn ESignProvider,
    wanted: Option<&str>,
    folder: &str,
) -> Result<Template, ApiError> {
    if let Some(id) = wanted {
        return Ok(provider.template(ctx.client_id(), id).await?);
    }
    provider
        .templates(ctx.client_id())
        .await?
        .ok_or(ESignError::NoAccount)?
        .into_iter()
        .find(|t| t.folder_name.eq_ignore_ascii_case(folder))
        .ok_or_else(|| {
            ApiError::invalid(
                "templateId",
                format!("the connected e-signature account has no template in the folder {folder}; send templateId"),
            )
        })
}

/// A boxed [`Effect`] future.
pub type EffectFuture = Pin<Box<dyn Future<Output = Result<(Vec<Write>, Vec<Event>), ApiError>> + Send>>;

/// What an envelope's new status means for the purpose it was sent for: the writes and
/// webhooks committed with the status itself. Given the envelope as it will be.
pub type Effect = fn(Ctx, Envelope) -> EffectFuture;

/// The effects of each purpose, registered by the group that sends its envelopes
/// (`Routes::esign_effect`). A purpose nobody registered (`operator`: envelopes sent from the
/// operator API to try the sandbox) changes the envelope's status alone.
#[derive(Clone, Default)]
pub struct Effects(Vec<(&'static str, Effect)>);

impl Effects {
    /// Adds `purpose`'s effect; false when it already has one.
    pub fn register(&mut self, purpose: &'static str, effect: Effect) -> bool {
        if self.get(purpose).is_some() {
            return false;
        }
        self.0.push((purpose, effect));
        true
    }

    pub fn get(&self, purpose: &str) -> Option<Effect> {
        self.0.iter().find(|(p, _)| *p == purpose).map(|(_, e)| *e)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Effect)> + '_ {
        self.0.iter().copied()
    }
}

impl Envelope {
    /// The envelope as the operator API shows it.
    pub fn view(&self) -> serde_json::Value {
        serde_json::json!({
            "documentKey": self.document_key,
            "status": self.status.as_str(),
            "templateIds": self.template_ids,
            "signers": self.signers,
            "purpose": self.purpose,
            "reason": self.reason,
            "createdDate": self.created,
            "updatedDate": self.updated,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_rules() {
        use Action::*;
        use EsignStatus::*;
        let cases = [
            (Send, Created, true),
            (Send, NotSigned, false),
            (Sign, NotSigned, true),
            (Sign, Created, false),
            (Decline, NotSigned, true),
            (Decline, Created, false),
            (Void, Created, true),
            (Void, NotSigned, true),
        ];
        for (action, from, ok) in cases {
            assert_eq!(action.allowed_from(from), ok, "{action:?} from {from:?}");
        }
        for action in [Send, Sign, Decline, Void] {
            for from in [Signed, Declined, Voided] {
                assert!(!action.allowed_from(from), "{action:?} from final {from:?}");
            }
        }
        assert_eq!(Action::parse("sign"), Some(Sign));
        assert_eq!(Action::parse("SIGN"), None);
        assert_eq!(serde_json::to_value(NotSigned).unwrap(), "NOTSIGNED");
        assert_eq!(NotSigned.as_str(), "NOTSIGNED");
    }
}
