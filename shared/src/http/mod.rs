//! The request path shared by Lambda and the local API: route, parse, authenticate,
//! authorize, run the operation, render the envelope. Failures before the operation never
//! reach a handler and never write.

pub mod envelope;
pub mod idempotency;
pub mod openapi;
pub mod operator;
pub mod params;
pub mod router;

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response};
use tracing::Instrument;

use crate::app::{App, OperatorAccess};
use crate::auth::hash_key;
use crate::auth::{header_credentials, ClientRecord, Credentials, PiiLevel};
use crate::ctx::{Committed, Ctx};
use crate::error::{ApiError, Style};
use crate::webhooks::Envelope;
use envelope::{render_error, render_reply, Reply};
use operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use params::Params;
use router::{Handler, Matched, OperatorMatch};

/// Largest body of an ordinary request.
pub const BODY_LIMIT: usize = 1 << 20;
/// Where the OpenAPI document is served, outside `/v3/` (CONTRACT) and without credentials.
pub const OPENAPI_PATH: &str = "/openapi.json";
/// Largest multipart (upload) body.
pub const MULTIPART_LIMIT: usize = 50 << 20;

impl App {
    /// The body limit of a request: [`MULTIPART_LIMIT`] for a `multipart/form-data` body sent
    /// to an operation that takes files, [`BODY_LIMIT`] for everything else.
    pub fn body_limit(&self, path: &str, headers: &HeaderMap) -> usize {
        let multipart = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
        let path = path.strip_prefix(LEGACY_PREFIX).unwrap_or(path);
        if multipart && self.routes.takes_files(path) {
            MULTIPART_LIMIT
        } else {
            BODY_LIMIT
        }
    }
}

/// The answer to a request that was not fully received in time (part 1: such a request is
/// never started): HTTP 408, `1408`.
pub fn request_timeout() -> Response<Bytes> {
    outside_a_route(&ApiError::Resource {
        http: 408,
        code: "1408",
        desc: "Request timeout: the request was not received in time".into(),
    })
}

/// The answer when a request's task ended without one (it panicked): HTTP 500, `1500`.
pub fn internal_error() -> Response<Bytes> {
    outside_a_route(&ApiError::internal("the request's task ended without an answer"))
}

/// The answer when a request ran out of its invocation's time (a store or queue that stopped
/// answering): HTTP 500, `1500`, rather than the platform's bare error.
pub fn out_of_time() -> Response<Bytes> {
    outside_a_route(&ApiError::internal("the request ran out of time"))
}

/// An error answered by an adapter before or after the kernel's routing.
fn outside_a_route(err: &ApiError) -> Response<Bytes> {
    let request_id = crate::ids::unique();
    let (status, body) = render_error(err, Style::Resource, &request_id);
    json_response(status, body, &request_id)
}

/// `GET /v3/ping` and `GET /v3/status`: answered from the credentials alone, they change
/// nothing.
pub fn is_health(method: &Method, path: &str) -> bool {
    method == Method::GET && (path == "/v3/ping" || path == "/v3/status")
}

/// A request as the adapters hand it over.
pub struct RawRequest {
    pub method: Method,
    /// Path without the query.
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    /// The body, or the limit it exceeded.
    pub body: Result<Bytes, usize>,
    /// The caller's address (TCP peer locally, the API Gateway source IP in Lambda).
    pub ip: IpAddr,
}

/// The response, and the webhooks to hand over once it has been written.
pub struct Handled {
    pub response: Response<Bytes>,
    pub events: Vec<Envelope>,
}

const LEGACY_PREFIX: &str = "/tapiv3/index.php";

/// `/v3/ping`'s body: the envelope's rendering of `Reply::ok().with("status", "ok")` (a
/// test holds them equal).
const PING: &[u8] = br#"{"statusCode":"101","statusDesc":"Ok","status":"ok"}"#;

/// A request's use of an `Idempotency-Key` ([`idempotency`]): the key it claimed, or the
/// earlier answer it replays.
#[derive(Default)]
struct Idem {
    held: Option<idempotency::Held>,
    replay: Option<(u16, Bytes)>,
}

fn json_response(status: u16, body: Bytes, request_id: &str) -> Response<Bytes> {
    let mut r = Response::new(body);
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Ok(v) = HeaderValue::from_str(request_id) {
        r.headers_mut().insert("x-request-id", v);
    }
    r
}

/// Commits the webhook of `reply`'s record for the operation, its bank numbers masked (kept
/// out of the request's own future, whose size every handler's stack shares). A record that
/// names nothing (a bare message, an empty list) is led by the request's identifiers, so
/// the receiver knows what the call was about.
async fn fire_record(ctx: &Ctx, reply: &Reply, ids: Vec<(String, serde_json::Value)>) -> Result<(), ApiError> {
    let key = ctx.client.webhook_key.as_deref();
    let mut record = reply.record();
    if !record.keys().any(|k| names_a_record(k)) {
        record = ids.into_iter().chain(record).collect();
    }
    let event = crate::webhooks::masked_record_event(&ctx.operation, record, key)?;
    Ok(ctx.commit(Vec::new(), vec![event]).await?)
}

/// Whether a field names a record: an ID (`accountId`, `tradeID`, `documentid`) or a
/// reference number.
fn names_a_record(field: &str) -> bool {
    field.ends_with("Id") || field.ends_with("ID") || field.ends_with("id") || field.eq_ignore_ascii_case("RefNum")
}

/// The request's identifiers, as sent (text values only): what a webhook of a record that
/// names nothing leads with.
fn identifiers(params: &Params) -> Vec<(String, serde_json::Value)> {
    params
        .map()
        .iter()
        .filter(|(k, v)| names_a_record(k) && (v.is_string() || v.is_number()) && !is_credential(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The credential parameter (`clientID`) in any spelling, which no webhook carries from the
/// request (`client_id` in a payload is the receiving client's own ID, CONTRACT).
fn is_credential(field: &str) -> bool {
    field.replace(['_', '-'], "").eq_ignore_ascii_case("clientid")
}

/// A handler's result as a status and body. An internal error is logged here, once, in its
/// request's span.
fn render_result(result: Result<Reply, ApiError>, style: Style, request_id: &str) -> (u16, Bytes) {
    match result {
        Ok(reply) => render_reply(reply),
        Err(e) => {
            if let ApiError::Internal(cause) = &e {
                tracing::error!(error = %cause, "internal error");
            }
            render_error(&e, style, request_id)
        }
    }
}

impl App {
    /// Handles one request end to end.
    pub async fn handle(self: &Arc<Self>, req: RawRequest) -> Handled {
        let request_id = crate::ids::unique();
        let path = req.path.strip_prefix(LEGACY_PREFIX).unwrap_or(&req.path).to_owned();
        if is_health(&req.method, &path) {
            // A span only around an internal error, the one thing a health check logs: a span
            // for every probe would be most of what a probe costs.
            let (status, body) = match self.health_check(&req).await {
                Ok(()) => self.health(&path),
                Err(e) => {
                    let internal = matches!(e, ApiError::Internal(_));
                    let render = || render_result(Err(e), Style::Resource, &request_id);
                    if internal {
                        tracing::info_span!("request", request_id = request_id.as_str()).in_scope(render)
                    } else {
                        render()
                    }
                }
            };
            return Handled {
                response: json_response(status, body, &request_id),
                events: Vec::new(),
            };
        }
        // Operation and client are recorded once known; the path is left out of the span
        // (the operation names the route) to keep the per-request cost down.
        let span = tracing::info_span!(
            "request",
            request_id = request_id.as_str(),
            operation = tracing::field::Empty,
            client = tracing::field::Empty
        );
        async {
            if path.starts_with("/operator/") || path == "/operator" {
                return self.handle_operator(&req, &path, &request_id).await;
            }
            let committed = Arc::new(Mutex::new(Vec::new()));
            let mut idem = Idem::default();
            let (style, result) = self.run(req, &path, &request_id, committed.clone(), &mut idem).await;
            if let Some((status, body)) = idem.replay {
                let mut response = json_response(status, body, &request_id);
                response
                    .headers_mut()
                    .insert("idempotent-replayed", HeaderValue::from_static("true"));
                return Handled {
                    response,
                    events: Vec::new(),
                };
            }
            let ok = result.is_ok();
            let (status, body) = render_result(result, style, &request_id);
            let events = if ok {
                std::mem::take(&mut *committed.lock().unwrap_or_else(|e| e.into_inner()))
            } else {
                Vec::new()
            };
            if let Some(held) = idem.held {
                // The answer replays from here on (a failure to store it leaves the key
                // answering 409 until it expires: never a second run). An answer larger
                // than a record (a long list read) cannot be kept: the key is released.
                let settle = idempotency::settle(&held, status, &body);
                match self.ports.store.write(vec![settle]).await {
                    Ok(()) => {}
                    Err(crate::store::StoreError::TooLarge) => {
                        tracing::warn!("idempotent answer too large to keep; key released");
                        if let Err(e) = self.ports.store.write(vec![idempotency::release(&held)]).await {
                            tracing::error!(error = %e, "idempotency key not released");
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "idempotent answer not stored"),
                }
            }
            Handled {
                response: json_response(status, body, &request_id),
                events,
            }
        }
        .instrument(span)
        .await
    }

    async fn run(
        self: &Arc<Self>,
        req: RawRequest,
        path: &str,
        request_id: &str,
        committed: Arc<Mutex<Vec<Envelope>>>,
        idem: &mut Idem,
    ) -> (Style, Result<Reply, ApiError>) {
        let Some(matched) = self.routes.find(&req.method, path) else {
            // The path as the client sent it (under the legacy prefix too).
            return (Style::Method, Err(ApiError::UnknownRoute(req.path)));
        };
        let style = match matched {
            Matched::Method { .. } => Style::Method,
            Matched::Resource { .. } => Style::Resource,
        };
        (style, self.run_matched(matched, req, request_id, committed, idem).await)
    }

    async fn run_matched(
        self: &Arc<Self>,
        matched: Matched<'_>,
        req: RawRequest,
        request_id: &str,
        committed: Arc<Mutex<Vec<Envelope>>>,
        idem: &mut Idem,
    ) -> Result<Reply, ApiError> {
        let mut params = Params::from_query(req.query.as_deref());
        let body_err = match (&mut params, &req.body) {
            (Ok(p), Ok(body)) => {
                let ct = req
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok());
                p.add_body(ct, body.clone()).await.err()
            }
            (Ok(_), Err(limit)) => Some(ApiError::TooLarge(*limit)),
            (Err(e), _) => Some(e.clone()),
        };
        let params = params.unwrap_or_default();
        let body_params = (body_err.is_none() && req.method != Method::GET).then_some(&params);
        let client = match self.authenticate(&req, body_params).await {
            Ok(c) => c,
            Err(e) if matches!(body_err, Some(ApiError::TooLarge(_))) => {
                return Err(ApiError::Coded {
                    code: e.code(),
                    desc: e.desc(),
                    http: Some(413),
                });
            }
            Err(e) => return Err(e),
        };
        tracing::Span::current().record("client", client.id.as_str());
        if !client.ip_allowed(req.ip) {
            return Err(ApiError::IpNotAllowed);
        }
        let mut operation: Arc<str> = Arc::from(req.path.as_str());
        let style = match matched {
            Matched::Method { .. } => Style::Method,
            Matched::Resource { .. } => Style::Resource,
        };
        let (handler, pii, params): (Handler, PiiLevel, Params) = match matched {
            Matched::Method { name, called, handler } => {
                operation = Arc::from(name);
                if !client.may_call(called) {
                    return Err(ApiError::MethodNotAuthorized(called.to_owned()));
                }
                (handler, PiiLevel::High, params)
            }
            Matched::Resource {
                scope,
                handler,
                path_params,
            } => {
                let level = client.scope_level(scope.family).filter(|l| *l >= scope.min);
                let Some(level) = level else {
                    return Err(ApiError::ScopeMissing(scope.name));
                };
                let mut params = params;
                for (k, v) in path_params {
                    params.set(k, v);
                }
                (handler, level, params)
            }
        };
        if let Some(e) = body_err {
            return Err(e);
        }
        tracing::Span::current().record("operation", &*operation);
        // Method-style operations write whatever their verb (GET included); resource-style
        // GETs only read.
        if let Some(raw) = req
            .headers
            .get(idempotency::HEADER)
            .filter(|_| req.method != Method::GET || style == Style::Method)
        {
            let key = idempotency::parse(raw)?;
            let raw_body = req.body.as_ref().map(|b| b.as_ref()).unwrap_or_default();
            let multipart = req
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/"));
            // A multipart body sent again has a new boundary: compared as its parts.
            let parts = multipart.then(|| idempotency::parts(&params));
            let body = parts.as_deref().unwrap_or(raw_body);
            let fp = idempotency::fingerprint(&req.method, &req.path, req.query.as_deref(), body);
            let now = self.ports.clock.now().timestamp();
            match idempotency::claim(self.ports.store.as_ref(), &client.id, &key, &fp, now).await? {
                idempotency::Claim::Replay { status, body } => {
                    idem.replay = Some((status, body));
                    return Ok(Reply::ok());
                }
                idempotency::Claim::Fresh(held) => idem.held = Some(held),
            }
        }
        let ctx = Ctx {
            app: self.ports.clone(),
            client,
            ip: req.ip,
            request_id: request_id.into(),
            operation,
            pii,
            committed,
            fired: Arc::default(),
        };
        if style == Style::Resource {
            return handler(ctx, params).await;
        }
        // Every successful method-style call fires (part 1, Events): a method the table does
        // not list that fired nothing sends its response record (CONTRACT, "Webhook payloads").
        let listed = crate::webhooks::listed(&ctx.operation);
        let ids = if listed { Vec::new() } else { identifiers(&params) };
        let reply = handler(ctx.clone(), params).await?;
        if !ctx.has_fired() && !listed {
            Box::pin(fire_record(&ctx, &reply, ids)).await?;
        }
        Ok(reply)
    }

    /// An operator request: the response, and the webhooks a successful one fired.
    async fn handle_operator(&self, req: &RawRequest, path: &str, request_id: &str) -> Handled {
        let committed = Committed::default();
        let result = self.run_operator(req, path, request_id, committed.clone()).await;
        let (status, body, events) = match result {
            Ok(OpReply { status, body }) => {
                let events = std::mem::take(&mut *committed.lock().unwrap_or_else(|e| e.into_inner()));
                (status, body, events)
            }
            Err(e) => {
                if let OpError::Internal(cause) = &e {
                    tracing::error!(error = %cause, "operator request failed");
                }
                (e.status(), serde_json::json!({"error": e.to_string()}), Vec::new())
            }
        };
        Handled {
            response: json_response(status, Bytes::from(body.to_string()), request_id),
            events,
        }
    }

    async fn run_operator(
        &self,
        req: &RawRequest,
        path: &str,
        request_id: &str,
        committed: Committed,
    ) -> Result<OpReply, OpError> {
        let expected = match &self.operator {
            OperatorAccess::Disabled => return Err(OpError::NotFound("not found".into())),
            OperatorAccess::Trusted => None,
            OperatorAccess::Token(t) => Some(t),
        };
        if let Some(expected) = expected {
            let presented = req
                .headers
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, t)| t.trim());
            // Hash both sides so the comparison is constant-time whatever their lengths.
            if !presented.is_some_and(|t| hash_key(t) == hash_key(expected)) {
                return Err(OpError::Unauthorized("invalid operator token".into()));
            }
        }
        // A GET takes no body: whatever it carries is not read. A DELETE may carry one (the
        // flag values it removes), or `null` for none.
        let bodiless = matches!(req.method, Method::GET | Method::HEAD);
        let body = match &req.body {
            Ok(b) if b.is_empty() || bodiless => serde_json::Map::new(),
            Ok(b) => match serde_json::from_slice(b) {
                Ok(serde_json::Value::Object(body)) => body,
                Ok(serde_json::Value::Null) if req.method == Method::DELETE => serde_json::Map::new(),
                Ok(_) => return Err(OpError::BadRequest("the body must be a JSON object".into())),
                Err(e) => return Err(OpError::BadRequest(format!("invalid JSON: {e}"))),
            },
            Err(limit) => return Err(OpError::TooLarge(format!("body over {limit} bytes"))),
        };
        let (handler, path_params) = match self.routes.find_operator(&req.method, path) {
            OperatorMatch::Found { handler, path_params } => (handler, path_params),
            OperatorMatch::WrongVerb => {
                return Err(OpError::NotAllowed(format!("{} is not allowed on {path}", req.method)))
            }
            OperatorMatch::NotFound => {
                return Err(OpError::NotFound(format!("no operator endpoint {} {path}", req.method)))
            }
        };
        let ctx = OperatorCtx {
            ports: self.ports.clone(),
            routes: self.routes.clone(),
            request_id: request_id.into(),
            committed,
        };
        let request = OperatorRequest {
            method: req.method.clone(),
            body,
            params: path_params.into_iter().map(|(k, v)| (k, v.to_owned())).collect(),
        };
        handler(ctx, request).await
    }

    /// Header credentials win; body credentials count only for non-GET requests.
    async fn authenticate(&self, req: &RawRequest, body: Option<&Params>) -> Result<Arc<ClientRecord>, ApiError> {
        let creds = match header_credentials(&req.headers) {
            Some(Some(c)) => c,
            Some(None) => return Err(ApiError::InvalidCredentials),
            None => {
                // Part 1: a header or the body, never the URL's query string.
                let from_body = body.and_then(|p| {
                    Some(Credentials {
                        client_id: p.body_opt("clientID")?.into(),
                        api_key: p.body_opt("developerAPIKey")?.into(),
                    })
                });
                from_body.ok_or(ApiError::InvalidCredentials)?
            }
        };
        self.clients.authenticate(self.store.as_ref(), &creds).await
    }

    /// The caller of `GET /v3/ping` or `/v3/status`: authenticated, from an allowed address.
    /// The allow-list applies here too: a blocked address learns nothing, not even whether a
    /// key is valid.
    async fn health_check(&self, req: &RawRequest) -> Result<(), ApiError> {
        let client = self.authenticate(req, None).await?;
        if !client.ip_allowed(req.ip) {
            return Err(ApiError::IpNotAllowed);
        }
        Ok(())
    }

    /// A health check's answer. Ping's never changes, so it is not rendered per probe.
    fn health(&self, path: &str) -> (u16, Bytes) {
        if path == "/v3/ping" {
            return (200, Bytes::from_static(PING));
        }
        let status = Reply::ok()
            .with(
                "timestamp",
                self.clock.now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            )
            .with("version", self.version)
            .with("environment", self.env.name())
            .with("flags", serde_json::Value::Null);
        render_reply(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_answers_what_the_envelope_renders() {
        let rendered = render_reply(Reply::ok().with("status", "ok"));
        assert_eq!(rendered, (200, Bytes::from_static(PING)));
    }
}
