//! The one error type of the API. Each variant knows its `statusCode`, its HTTP status for
//! method-style and resource-style endpoints, and its `statusDesc`; the kernel maps it to
//! the envelope in exactly one place (`http::envelope`).

use std::sync::Arc;

use crate::store::StoreError;

/// The two endpoint styles of part 1 (§Conventions 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `/v3/<operationName>`: failures are HTTP 404 unless the spec says otherwise.
    Method,
    /// `/v3/<resource>`: HTTP statuses used consistently.
    Resource,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// No operation or resource at this path.
    #[error("Operation or resource not found: {0}")]
    UnknownRoute(String),
    /// `103`: missing or invalid credentials.
    #[error("Invalid developer API key")]
    InvalidCredentials,
    /// `110`: the key lacks a field permission.
    #[error("Permission denied: the key may not set {0}")]
    FieldPermission(String),
    /// `111`: the key is not authorized for the method.
    #[error("The API key is not authorized for {0}")]
    MethodNotAuthorized(String),
    /// `111`: the caller's IP address is not on the client's allow-list.
    #[error("The caller's IP address is not allowed")]
    IpNotAllowed,
    /// `1403`: a resource-style scope is missing.
    #[error("Permission denied: scope {0} required")]
    ScopeMissing(&'static str),
    /// `106`: a required parameter is missing or empty.
    #[error("Data/parameter missing: {0}")]
    Missing(String),
    /// `106`: a parameter is malformed or its value is not allowed.
    #[error("Invalid parameter {name}: {why}")]
    Invalid { name: String, why: String },
    /// The body cannot be decoded (bad JSON, form encoding, UTF-8, multipart).
    #[error("Malformed request body: {0}")]
    Malformed(String),
    /// The body is over the size limit (HTTP 413).
    #[error("Request body exceeds the {0}-byte limit")]
    TooLarge(usize),
    /// A record would be larger than a store keeps (HTTP 413, as a body over the limit).
    #[error(
        "The record would exceed the {} bytes a record may hold",
        crate::store::MAX_ITEM_BYTES
    )]
    RecordTooLarge,
    /// A spec code with its own message, HTTP 404 on method-style endpoints unless `http`
    /// says otherwise (`148`, `198`, `135`, `145` with HTTP 200, ...).
    #[error("{desc}")]
    Coded {
        code: &'static str,
        desc: String,
        http: Option<u16>,
    },
    /// A spec code whose body carries keys beside the envelope (`145` with
    /// `verificationResponse`).
    #[error("{desc}")]
    CodedBody {
        code: &'static str,
        desc: String,
        http: Option<u16>,
        body: serde_json::Map<String, serde_json::Value>,
    },
    /// A resource-style failure with an explicit HTTP status (`1400`, `1404`, `1422`, `239`).
    #[error("{desc}")]
    Resource {
        http: u16,
        code: &'static str,
        desc: String,
    },
    /// Anything internal: HTTP 500 `1500`. The cause is logged once, where the error is
    /// rendered; the client sees only the request ID.
    #[error("Internal error")]
    Internal(#[source] Cause),
}

impl ApiError {
    pub fn missing(name: &str) -> Self {
        ApiError::Missing(name.to_owned())
    }
    pub fn invalid(name: &str, why: impl Into<String>) -> Self {
        ApiError::Invalid {
            name: name.to_owned(),
            why: why.into(),
        }
    }
    pub fn coded(code: &'static str, desc: impl Into<String>) -> Self {
        ApiError::Coded {
            code,
            desc: desc.into(),
            http: None,
        }
    }
    pub fn coded_http(code: &'static str, http: u16, desc: impl Into<String>) -> Self {
        ApiError::Coded {
            code,
            desc: desc.into(),
            http: Some(http),
        }
    }
    /// An internal failure (`1500`): `what` is logged where the error is rendered.
    pub fn internal(what: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        ApiError::Internal(Cause {
            what: what.into(),
            source: None,
        })
    }
    /// An internal failure caused by `source`, which the error keeps for the log.
    pub fn internal_from(
        what: impl Into<std::borrow::Cow<'static, str>>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ApiError::Internal(Cause::new(what, source))
    }
    /// HTTP 409: the resource is not in a state that allows the change (the operator API
    /// answers it as its own 409).
    pub fn conflict(desc: impl Into<String>) -> Self {
        ApiError::Resource {
            http: 409,
            code: "409",
            desc: desc.into(),
        }
    }
    pub fn not_found(desc: impl Into<String>) -> Self {
        ApiError::Resource {
            http: 404,
            code: "1404",
            desc: desc.into(),
        }
    }

    /// The body `statusCode`.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::UnknownRoute(_) => "1404",
            ApiError::InvalidCredentials => "103",
            ApiError::FieldPermission(_) => "110",
            ApiError::MethodNotAuthorized(_) | ApiError::IpNotAllowed => "111",
            ApiError::ScopeMissing(_) => "1403",
            ApiError::Missing(_) | ApiError::Invalid { .. } => "106",
            ApiError::Malformed(_) | ApiError::TooLarge(_) | ApiError::RecordTooLarge => "106",
            ApiError::Coded { code, .. } | ApiError::CodedBody { code, .. } | ApiError::Resource { code, .. } => code,
            ApiError::Internal(_) => "1500",
        }
    }

    /// The body `statusCode` in the given style: resource-style endpoints answer `1400`
    /// for what method-style ones call `106`.
    pub fn code_for(&self, style: Style) -> &'static str {
        match (style, self) {
            (Style::Resource, ApiError::Missing(_) | ApiError::Invalid { .. })
            | (Style::Resource, ApiError::Malformed(_) | ApiError::TooLarge(_) | ApiError::RecordTooLarge) => "1400",
            _ => self.code(),
        }
    }

    /// The HTTP status in the given style.
    pub fn http_status(&self, style: Style) -> u16 {
        match (self, style) {
            (ApiError::UnknownRoute(_), _) => 404,
            (ApiError::TooLarge(_) | ApiError::RecordTooLarge, _) => 413,
            (ApiError::Internal(_), _) => 500,
            (ApiError::Coded { http: Some(h), .. }, _)
            | (ApiError::CodedBody { http: Some(h), .. }, _)
            | (ApiError::Resource { http: h, .. }, _) => *h,
            (_, Style::Method) => 404,
            (ApiError::InvalidCredentials, Style::Resource) => 401,
            (ApiError::FieldPermission(_), Style::Resource)
            | (ApiError::MethodNotAuthorized(_), Style::Resource)
            | (ApiError::IpNotAllowed, Style::Resource)
            | (ApiError::ScopeMissing(_), Style::Resource) => 403,
            (ApiError::Missing(_) | ApiError::Invalid { .. } | ApiError::Malformed(_), Style::Resource) => 400,
            (ApiError::Coded { .. } | ApiError::CodedBody { .. }, Style::Resource) => 404,
        }
    }

    /// The body `statusDesc`.
    pub fn desc(&self) -> String {
        self.to_string()
    }

    /// Extra body fields: the incumbent's clients read `Error(s)` on `106`.
    pub fn detail(&self) -> Option<String> {
        match self {
            ApiError::Missing(name) => Some(format!("{name} : Missing")),
            ApiError::Invalid { name, why } => Some(format!("{name} : {why}")),
            _ => None,
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::TooLarge => ApiError::RecordTooLarge,
            e => ApiError::internal_from("store failure", e),
        }
    }
}

/// What went wrong inside, and the error that caused it: kept for the log, never answered.
#[derive(Clone, Debug)]
pub struct Cause {
    what: std::borrow::Cow<'static, str>,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Cause {
    /// `what` went wrong, caused by `source`.
    pub fn new(
        what: impl Into<std::borrow::Cow<'static, str>>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Cause {
            what: what.into(),
            source: Some(Arc::new(source)),
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Causes are not part of an error's identity: two internal errors compare equal.
impl PartialEq for Cause {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
