//! The operator API's side of the kernel: who may call it (the operator auth mode of the
//! process), its JSON bodies, and its one error type, rendered as `{"error": ...}` in one
//! place. The endpoints are registered like operations (`Routes::operator`) by the operator
//! crate; the kernel knows none of them.

use std::sync::Arc;

use http::Method;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::ctx::{Committed, Ctx};
use crate::error::{ApiError, Cause};
use crate::esign::Effects;
use crate::ports::Ports;
use crate::store::{Store, StoreError};

/// What an operator action asks of the process's route table (`Routes` answers it).
pub trait RouteTable: Send + Sync {
    /// Whether a method-style operation of this name is routed.
    fn has_op(&self, name: &str) -> bool;
    /// Whether a client may be granted scope `name`.
    fn knows_scope(&self, name: &str) -> bool;
    /// The e-signature effects the groups registered.
    fn effects(&self) -> &Effects;
}

/// The context of one operator request.
#[derive(Clone)]
pub struct OperatorCtx {
    pub ports: Arc<Ports>,
    /// The process's routes: the e-signature effects its groups registered, and the
    /// operation and scope names a client's permissions may name.
    pub routes: Arc<dyn RouteTable>,
    pub request_id: Arc<str>,
    pub(crate) committed: Committed,
}

impl OperatorCtx {
    pub fn store(&self) -> &dyn Store {
        self.ports.store.as_ref()
    }

    /// The context of an action on behalf of client `client_id` (its records, its webhooks,
    /// fired as `operation`); `404` when there is no such client.
    pub async fn for_client(&self, client_id: &str, operation: &str) -> Result<Ctx, OpError> {
        let client = crate::auth::load_client(self.store(), client_id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no client {client_id}")))?;
        Ok(Ctx::system(
            self.ports.clone(),
            Arc::new(client),
            self.request_id.clone(),
            operation,
            self.committed.clone(),
        ))
    }
}

/// An operator request: its verb, path parameters and JSON body, always an object (`{}`
/// when empty, for a GET, or for a DELETE's `null`; the kernel answers `400` to any other JSON, which serde would otherwise read
/// positionally into a struct's fields).
pub struct OperatorRequest {
    pub method: Method,
    pub body: Map<String, Value>,
    pub(crate) params: Vec<(&'static str, String)>,
}

impl OperatorRequest {
    /// A path parameter of the endpoint's pattern (`{clientId}`).
    pub fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }

    /// The body as `T`; `400` naming what is wrong.
    pub fn body<T: DeserializeOwned>(&self) -> Result<T, OpError> {
        T::deserialize(&self.body).map_err(|e| OpError::BadRequest(format!("invalid body: {e}")))
    }

    /// For an endpoint whose body is `{}`: `400` for any key, as an unknown key is elsewhere.
    pub fn no_body(&self) -> Result<(), OpError> {
        match self.body.keys().next() {
            Some(key) => Err(OpError::BadRequest(format!(
                "invalid body: unknown field `{key}`, the body is {{}}"
            ))),
            None => Ok(()),
        }
    }
}

/// A successful operator answer.
pub struct OpReply {
    pub status: u16,
    pub body: Value,
}

impl OpReply {
    pub fn ok(body: Value) -> Self {
        OpReply { status: 200, body }
    }
    pub fn created(body: Value) -> Self {
        OpReply { status: 201, body }
    }

    /// 200 with a record's view and the `clientId` it concerns.
    pub fn for_client(view: impl serde::Serialize, client: &str) -> Self {
        let mut body = serde_json::to_value(view).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut body {
            m.insert("clientId".into(), Value::from(client));
        }
        OpReply::ok(body)
    }
}

/// The operator API's one error type: its HTTP status, and a message shown as `error`.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    NotAllowed(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    /// Logged with its cause where it is rendered; the body says only `internal error`.
    #[error("internal error")]
    Internal(#[source] Cause),
}

impl OpError {
    pub fn status(&self) -> u16 {
        match self {
            OpError::BadRequest(_) => 400,
            OpError::Unauthorized(_) => 401,
            OpError::NotFound(_) => 404,
            OpError::NotAllowed(_) => 405,
            OpError::Conflict(_) => 409,
            OpError::TooLarge(_) => 413,
            OpError::Internal(_) => 500,
        }
    }

    /// An internal failure caused by `source`.
    pub fn internal_from(what: &'static str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        OpError::Internal(Cause::new(what, source))
    }
}

/// A client operation's refusal as the operator sees it: a parameter problem is `400`, an
/// unknown record `404`, an internal failure `500`.
impl From<ApiError> for OpError {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::Internal(cause) => OpError::Internal(cause),
            ApiError::Missing(_) | ApiError::Invalid { .. } | ApiError::Malformed(_) => OpError::BadRequest(e.desc()),
            ApiError::Resource { http: 409, desc, .. } => OpError::Conflict(desc),
            ApiError::RecordTooLarge => OpError::TooLarge(e.desc()),
            other => OpError::NotFound(other.desc()),
        }
    }
}

impl From<StoreError> for OpError {
    fn from(e: StoreError) -> Self {
        ApiError::from(e).into()
    }
}
