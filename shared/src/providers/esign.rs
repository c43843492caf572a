//! The e-signature provider port and its deterministic sandbox implementation.
//!
//! A client's "connected e-signature account" holds templates (fetchSubscriptionDocuments
//! lists them, addSubscriptionsforOffering attaches them to offerings) and receives
//! envelopes: templates sent to signers, each known by its `documentKey`. The platform keeps
//! its own record of every envelope and its status (`crate::esign`); the provider is asked
//! for templates, to send an envelope and to void one.
//!
//! Sandbox rules (also in `docs/offerings-documents.md`):
//! - Every client starts with a connected account holding the three templates of
//!   [`DEFAULT_TEMPLATES`], whose IDs are derived from the client ID (the same client always
//!   gets the same IDs; two clients never share one).
//! - The operator replaces a client's templates (`PUT /operator/clients/{clientId}/esign-templates`,
//!   which also connects the account) or disconnects the account (`DELETE` on the same
//!   path); the account is stored under `<client>#ESIGN` / `ACCOUNT`.
//! - An envelope's `documentKey` is derived from the client and the caller's `reference`:
//!   sending the same reference again names the same envelope.
//! - Nobody signs by themselves: the operator signs, declines or voids an envelope
//!   (`POST /operator/clients/{clientId}/esign/envelopes/{documentKey}/{sign|decline|void}`).

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::store::{Key, Store, Val, Write};

/// `created` and `lastModified` of the default templates.
pub const DEFAULT_TEMPLATE_DATE: &str = "2024-01-02T00:00:00.0000000Z";

/// The default templates of a sandbox account: (name, description, page count, folder).
pub const DEFAULT_TEMPLATES: &[(&str, &str, u32, &str)] = &[
    (
        "Subscription Agreement",
        "Subscription agreement an investor signs for an offering (sandbox)",
        12,
        "Subscription Documents",
    ),
    (
        "Investor Questionnaire",
        "Investor suitability questionnaire (sandbox)",
        6,
        "Subscription Documents",
    ),
    (
        "Non-Disclosure Agreement",
        "Non-disclosure agreement for an offering's materials (sandbox)",
        3,
        "NDA",
    ),
    (
        "Custody Agreement",
        "Custody account agreement an account's primary party signs (sandbox)",
        8,
        "Custody",
    ),
];

/// The owner shown on sandbox templates.
pub const SANDBOX_OWNER_NAME: &str = "Sandbox E-Signature Admin";
pub const SANDBOX_OWNER_EMAIL: &str = "esign-admin@sandbox.invalid";

/// The owner of a template, as e-signature providers describe it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateOwner {
    pub user_name: String,
    pub user_id: String,
    pub email: String,
}

/// A template of the connected account. Serializes to fetchSubscriptionDocuments' element,
/// fields in part 2's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    #[serde(rename = "templateId")]
    pub id: String,
    pub name: String,
    /// `"true"` or `"false"`, as providers answer it.
    pub shared: String,
    pub description: String,
    /// ISO 8601, UTC.
    pub created: String,
    pub last_modified: String,
    pub page_count: u32,
    /// The template's path at the provider (`/templates/<templateId>`).
    pub uri: String,
    pub folder_name: String,
    pub owner: TemplateOwner,
}

/// Who signs an envelope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signer {
    pub name: String,
    pub email: String,
    /// The signer's role in the templates (`Investor`, `Secondary`, ...); free text.
    #[serde(default)]
    pub role: String,
}

/// An envelope to send: templates to signers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvelopeRequest {
    /// The caller's name for this sending (e.g. `trade-100012-subscription`): the same
    /// reference always names the same envelope, so a retried send never sends twice.
    pub reference: String,
    /// Template IDs of the connected account, at least one.
    pub template_ids: Vec<String>,
    /// At least one, each with a name and an email address.
    pub signers: Vec<Signer>,
}

/// What a provider refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ESignError {
    #[error("No e-signature account is connected for this client")]
    NoAccount,
    #[error("Template {0} does not exist in the connected e-signature account")]
    UnknownTemplate(String),
    #[error("An envelope needs at least one template")]
    NoTemplate,
    #[error("An envelope needs at least one signer with a name and an email address")]
    NoSigner,
    #[error("An envelope needs a reference")]
    NoReference,
    /// The provider could not be reached or failed (never in the sandbox).
    #[error("e-signature provider failure: {0}")]
    Provider(String),
}

/// The message of the "no connected account" answer.
pub const NO_ACCOUNT: &str = "No e-signature account is connected for this client";

impl From<ESignError> for ApiError {
    /// `106` for what the caller can fix (an account to connect, a template that does not
    /// exist, a missing signer); `1500` for a provider failure.
    fn from(e: ESignError) -> Self {
        match e {
            ESignError::NoAccount => ApiError::coded("106", NO_ACCOUNT),
            ESignError::UnknownTemplate(id) => ApiError::invalid(
                "templateId",
                format!("{id} is not a template of the connected e-signature account"),
            ),
            ESignError::NoTemplate => ApiError::missing("templateId"),
            ESignError::NoSigner => ApiError::invalid("signer", e.to_string()),
            ESignError::NoReference => ApiError::missing("reference"),
            ESignError::Provider(msg) => ApiError::internal(format!("e-signature provider failed: {msg}")),
        }
    }
}

/// An e-signature provider, seen from the platform.
#[async_trait]
pub trait ESignProvider: Send + Sync {
    /// The templates of the client's connected account, or `None` when no account is
    /// connected (an empty list is an account without templates).
    async fn templates(&self, client: &str) -> Result<Option<Vec<Template>>, ESignError>;

    /// Sends an envelope and answers its `documentKey`. The same `reference` answers the
    /// same key.
    async fn send(&self, client: &str, request: &EnvelopeRequest) -> Result<String, ESignError>;

    /// Voids a sent envelope at the provider (the platform records the status).
    async fn void(&self, client: &str, document_key: &str, reason: &str) -> Result<(), ESignError>;

    /// One template of the connected account: `NoAccount` or `UnknownTemplate` otherwise.
    async fn template(&self, client: &str, template_id: &str) -> Result<Template, ESignError> {
        let templates = self.templates(client).await?.ok_or(ESignError::NoAccount)?;
        templates
            .into_iter()
            .find(|t| t.id == template_id)
            .ok_or_else(|| ESignError::UnknownTemplate(template_id.to_owned()))
    }
}

/// A client's sandbox account as stored (absent: connected, with the default templates).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxAccount {
    pub connected: bool,
    pub templates: Vec<Template>,
}

/// A UUID-shaped identifier derived from its inputs (lower-case hex, 8-4-4-4-12).
pub fn derived_id(domain: &str, parts: &[&str]) -> String {
    let mut h = blake3::Hasher::new_derive_key(&format!("ips sandbox e-signature {domain}"));
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let hex = h.finalize().to_hex();
    let s = &hex.as_str()[..32];
    format!("{}-{}-{}-{}-{}", &s[..8], &s[8..12], &s[12..16], &s[16..20], &s[20..32])
}

/// The owner shown on a client's sandbox templates.
pub fn sandbox_owner(client: &str) -> TemplateOwner {
    TemplateOwner {
        user_name: SANDBOX_OWNER_NAME.into(),
        user_id: derived_id("user", &[client]),
        email: SANDBOX_OWNER_EMAIL.into(),
    }
}

/// A sandbox template: its ID derived from the client and the name unless given.
pub fn sandbox_template(client: &str, id: Option<&str>, name: &str) -> Template {
    let id = id.map_or_else(|| derived_id("template", &[client, name]), str::to_owned);
    Template {
        uri: format!("/templates/{id}"),
        id,
        name: name.to_owned(),
        shared: "false".into(),
        description: String::new(),
        created: DEFAULT_TEMPLATE_DATE.into(),
        last_modified: DEFAULT_TEMPLATE_DATE.into(),
        page_count: 1,
        folder_name: "Templates".into(),
        owner: sandbox_owner(client),
    }
}

/// The deterministic sandbox provider, keeping each client's account in the store.
#[derive(Clone)]
pub struct SandboxESign {
    store: Arc<dyn Store>,
}

impl SandboxESign {
    pub fn new(store: Arc<dyn Store>) -> Self {
        SandboxESign { store }
    }

    /// Where a client's sandbox account is kept.
    pub fn account_key(client: &str) -> Key {
        Key::new(format!("{client}#ESIGN"), "ACCOUNT")
    }

    /// The account every client starts with: connected, the [`DEFAULT_TEMPLATES`].
    pub fn default_account(client: &str) -> SandboxAccount {
        let templates = DEFAULT_TEMPLATES
            .iter()
            .map(|(name, description, pages, folder)| Template {
                description: (*description).into(),
                page_count: *pages,
                folder_name: (*folder).into(),
                ..sandbox_template(client, None, name)
            })
            .collect();
        SandboxAccount {
            connected: true,
            templates,
        }
    }

    /// The client's account as it stands.
    pub async fn account(&self, client: &str) -> Result<SandboxAccount, ESignError> {
        let item = self
            .store
            .get(&Self::account_key(client))
            .await
            .map_err(|e| ESignError::Provider(e.to_string()))?;
        let Some(item) = item else {
            return Ok(Self::default_account(client));
        };
        let d = item.get("d").and_then(Val::as_str).unwrap_or("");
        serde_json::from_str(d).map_err(|e| ESignError::Provider(format!("corrupt sandbox account: {e}")))
    }

    /// The write that stores a client's account (replacing the templates, or disconnecting).
    pub fn account_write(client: &str, account: &SandboxAccount) -> Write {
        let mut item = Self::account_key(client).item();
        item.insert("d".into(), Val::S(serde_json::to_string(account).unwrap_or_default()));
        Write::Put { item, cond: None }
    }

    /// The `documentKey` of a client's envelope sent with `reference`.
    pub fn document_key(client: &str, reference: &str) -> String {
        derived_id("envelope", &[client, reference])
    }
}

#[async_trait]
impl ESignProvider for SandboxESign {
    async fn templates(&self, client: &str) -> Result<Option<Vec<Template>>, ESignError> {
        let account = self.account(client).await?;
        Ok(account.connected.then_some(account.templates))
    }

    async fn send(&self, client: &str, request: &EnvelopeRequest) -> Result<String, ESignError> {
        if request.reference.trim().is_empty() {
            return Err(ESignError::NoReference);
        }
        let templates = self.templates(client).await?.ok_or(ESignError::NoAccount)?;
        if request.template_ids.is_empty() {
            return Err(ESignError::NoTemplate);
        }
        if let Some(unknown) = request
            .template_ids
            .iter()
            .find(|id| !templates.iter().any(|t| &t.id == *id))
        {
            return Err(ESignError::UnknownTemplate(unknown.clone()));
        }
        let signed_by_someone = !request.signers.is_empty()
            && request
                .signers
                .iter()
                .all(|s| !s.name.trim().is_empty() && s.email.contains('@'));
        if !signed_by_someone {
            return Err(ESignError::NoSigner);
        }
        Ok(Self::document_key(client, &request.reference))
    }

    async fn void(&self, client: &str, _document_key: &str, _reason: &str) -> Result<(), ESignError> {
        // The sandbox keeps no envelope of its own: the platform's record is the envelope.
        match self.templates(client).await? {
            Some(_) => Ok(()),
            None => Err(ESignError::NoAccount),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::embedded::EmbeddedStore;

    fn sandbox() -> SandboxESign {
        SandboxESign::new(Arc::new(EmbeddedStore::in_memory()))
    }

    fn request(reference: &str, templates: &[&str]) -> EnvelopeRequest {
        EnvelopeRequest {
            reference: reference.into(),
            template_ids: templates.iter().map(|t| (*t).to_owned()).collect(),
            signers: vec![Signer {
                name: "Ann Lee".into(),
                email: "ann@example.com".into(),
                role: "Investor".into(),
            }],
        }
    }

    #[tokio::test]
    async fn every_client_starts_connected_with_its_own_default_templates() {
        let s = sandbox();
        let a = s.templates("c1").await.unwrap().expect("connected");
        let names: Vec<&str> = a.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Subscription Agreement",
                "Investor Questionnaire",
                "Non-Disclosure Agreement",
                "Custody Agreement"
            ]
        );
        assert_eq!(a, s.templates("c1").await.unwrap().unwrap(), "deterministic");
        let b = s.templates("c2").await.unwrap().unwrap();
        assert!(a.iter().all(|t| b.iter().all(|u| u.id != t.id)), "IDs differ by client");
        let t = &a[0];
        assert_eq!(t.id.len(), 36);
        assert_eq!(t.uri, format!("/templates/{}", t.id));
        assert_eq!((t.page_count, t.shared.as_str()), (12, "false"));
        let json = serde_json::to_value(t).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "templateId",
                "name",
                "shared",
                "description",
                "created",
                "lastModified",
                "pageCount",
                "uri",
                "folderName",
                "owner"
            ]
        );
        assert_eq!(s.template("c1", &t.id).await.unwrap(), *t);
        assert_eq!(
            s.template("c2", &t.id).await,
            Err(ESignError::UnknownTemplate(t.id.clone()))
        );
    }

    #[tokio::test]
    async fn the_operator_replaces_templates_or_disconnects_the_account() {
        let s = sandbox();
        let own = sandbox_template("c1", Some("tpl-1"), "Side letter");
        let cases = [
            (true, vec![own.clone()], Some(vec![own])),
            (true, Vec::new(), Some(Vec::new())),
            (false, Vec::new(), None),
        ];
        for (connected, templates, listed) in cases {
            let account = SandboxAccount { connected, templates };
            let write = SandboxESign::account_write("c1", &account);
            s.store.write(vec![write]).await.unwrap();
            assert_eq!(s.templates("c1").await.unwrap(), listed, "{connected}");
        }
        assert_eq!(s.template("c1", "tpl-1").await, Err(ESignError::NoAccount));
        assert_eq!(
            s.send("c1", &request("r", &["tpl-1"])).await,
            Err(ESignError::NoAccount)
        );
        assert_eq!(s.void("c1", "k", "").await, Err(ESignError::NoAccount));
        assert!(s.templates("c2").await.unwrap().is_some(), "other clients unaffected");
    }

    #[tokio::test]
    async fn envelope_keys_follow_the_reference_and_sends_are_checked() {
        let s = sandbox();
        let t = s.templates("c1").await.unwrap().unwrap();
        let ids = [t[0].id.as_str(), t[2].id.as_str()];
        let k1 = s.send("c1", &request("trade-1", &ids)).await.unwrap();
        assert_eq!(k1, s.send("c1", &request("trade-1", &ids[..1])).await.unwrap());
        assert_ne!(k1, s.send("c1", &request("trade-2", &ids)).await.unwrap());
        assert_ne!(k1, SandboxESign::document_key("c2", "trade-1"));
        assert_eq!(k1, SandboxESign::document_key("c1", "trade-1"));
        assert_eq!(
            s.send("c1", &request("r", &["nope"])).await,
            Err(ESignError::UnknownTemplate("nope".into()))
        );
        assert_eq!(s.send("c1", &request("r", &[])).await, Err(ESignError::NoTemplate));
        assert_eq!(s.send("c1", &request(" ", &ids)).await, Err(ESignError::NoReference));
        let mut nobody = request("r", &ids);
        nobody.signers.clear();
        assert_eq!(s.send("c1", &nobody).await, Err(ESignError::NoSigner));
        nobody.signers.push(Signer {
            name: "Ann".into(),
            email: "no-address".into(),
            role: String::new(),
        });
        assert_eq!(s.send("c1", &nobody).await, Err(ESignError::NoSigner));
        assert_eq!(s.void("c1", &k1, "changed terms").await, Ok(()));
    }

    #[test]
    fn refusals_map_to_the_spec_codes() {
        assert_eq!(ApiError::from(ESignError::NoAccount).code(), "106");
        assert_eq!(ApiError::from(ESignError::NoAccount).desc(), NO_ACCOUNT);
        assert_eq!(ApiError::from(ESignError::UnknownTemplate("x".into())).code(), "106");
        assert_eq!(ApiError::from(ESignError::Provider("down".into())).code(), "1500");
    }
}
