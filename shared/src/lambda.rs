//! The Lambda adapters: configuration and SDK clients built once at cold start, API Gateway
//! HTTP API events through the same kernel as the local API, and JSON logs.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use lambda_http::request::{LambdaRequest, RequestContext};
use lambda_http::{Body, LambdaEvent, Request, RequestExt, Response};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use crate::app::OperatorAccess;
use crate::aws::LazyClient;
use crate::clock::SystemClock;
use crate::config::{Config, StoreKind};
use crate::function::Function;
use crate::http::RawRequest;
use crate::ports::Ports;
use crate::App;

/// Runs `function` as a Lambda: configuration, SDK clients and ports built once at cold
/// start (the S3 client only for a function that keeps documents), then API Gateway events
/// through the kernel. The operator function refuses requests that bypassed IAM.
pub async fn serve(function: Function) -> Result<(), lambda_http::Error> {
    let app = Arc::new(app(function).await?);
    if function.operator {
        run_http(lambda_http::service_fn(move |req| handle_operator(app.clone(), req))).await
    } else {
        run_http(lambda_http::service_fn(move |req| handle(app.clone(), req))).await
    }
}

/// Runs the legacy-prefix function, which also answers `GET /openapi.json` (CONTRACT: served
/// outside `/v3/`, in AWS too) with `render`'s document of its routes (all of them), made on
/// the first request that asks.
pub async fn serve_documented(function: Function, render: Render) -> Result<(), lambda_http::Error> {
    let app = Arc::new(app(function).await?);
    let document = Arc::new(std::sync::OnceLock::new());
    run_http(lambda_http::service_fn(move |req| {
        handle_documented(app.clone(), document.clone(), render, req)
    }))
    .await
}

/// What renders an OpenAPI document: the routes, and the service's version.
pub type Render = fn(&crate::Routes, &str) -> serde_json::Value;

async fn handle_documented(
    app: Arc<App>,
    document: Arc<std::sync::OnceLock<String>>,
    render: Render,
    req: Request,
) -> Result<Response<Body>, lambda_http::Error> {
    if req.method() == http::Method::GET && req.uri().path() == crate::http::OPENAPI_PATH {
        let text = document.get_or_init(|| render(&app.routes, app.ports.version).to_string());
        let mut r = Response::new(Body::Text(text.clone()));
        r.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        return Ok(r);
    }
    handle(app, req).await
}

/// `lambda_http::run`, with each event made convertible first: lambda_http panics on an
/// event it cannot turn into an `http::Request`, and a panic there, before the handler, ends
/// the process (anyone could send `?x="`).
async fn run_http<S>(handler: S) -> Result<(), lambda_http::Error>
where
    S: lambda_http::Service<Request, Response = Response<Body>, Error = lambda_http::Error>,
    S::Future: Send + 'static,
{
    lambda_runtime::run(Convertible(lambda_http::Adapter::from(handler))).await
}

/// A service of API Gateway events that hands the inner one only events that convert.
struct Convertible<S>(S);

impl<S> lambda_http::Service<LambdaEvent<LambdaRequest>> for Convertible<S>
where
    S: lambda_http::Service<LambdaEvent<LambdaRequest>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut event: LambdaEvent<LambdaRequest>) -> Self::Future {
        convertible(&mut event.payload);
        self.0.call(event)
    }
}

/// Bytes a URI's query cannot carry as they are (the URL standard's query set, and the
/// backtick, which the `http` crate refuses too); non-ASCII is always encoded.
const NOT_IN_QUERY: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'<').add(b'>').add(b'`');
/// The same for a path, where `?` would start the query.
const NOT_IN_PATH: &AsciiSet = &NOT_IN_QUERY.add(b'?');

/// Percent-encodes what the URI cannot carry in the raw path and query (encoded, they decode
/// to the same parameters), and reads a body API Gateway marked base64 but is not as text.
fn convertible(event: &mut LambdaRequest) {
    let LambdaRequest::ApiGatewayV2(ag) = event else {
        return;
    };
    let encode = |text: &mut Option<String>, set: &'static AsciiSet| {
        if let Some(t) = text {
            // Compared, not matched on `Cow::Owned`: a text that is one encoded byte comes
            // back borrowed, from the crate's table of `%XX`.
            let encoded: Cow<str> = utf8_percent_encode(t, set).into();
            if encoded != t.as_str() {
                *t = encoded.into_owned();
            }
        }
    };
    encode(&mut ag.raw_path, NOT_IN_PATH);
    encode(&mut ag.raw_query_string, NOT_IN_QUERY);
    if ag.is_base64_encoded {
        use base64::Engine;
        let body = ag.body.as_deref().unwrap_or_default();
        ag.is_base64_encoded = base64::engine::general_purpose::STANDARD.decode(body).is_ok();
    }
}

/// `function`'s application on the stores the template provides.
pub async fn app(function: Function) -> Result<App, lambda_http::Error> {
    let (mut ports, sdk, cfg) = aws_ports().await?;
    if let Some(blobs) = function.documents {
        ports.blobs = Some(blobs(&sdk, cfg.bucket));
    }
    Ok(function.app(ports, OperatorAccess::Trusted)?)
}

/// The ports of a function that serves no route (the webhook consumer).
pub async fn ports() -> Result<Arc<Ports>, lambda_http::Error> {
    Ok(Arc::new(aws_ports().await?.0))
}

/// What the batches function is invoked with: its schedule's `{"batch": name}`, or a batch
/// of its queue's messages.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum BatchInput {
    Sqs(aws_lambda_events::event::sqs::SqsEvent),
    Schedule { batch: String },
}

/// Runs the batches function: on a schedule's event, the batch's due items go onto the batch
/// queue (`IPS_BATCH_QUEUE_URL`) when the day is a business day in its zone; each message of
/// that queue is one item, processed idempotently, a failure reported so SQS retries it
/// (and, after its receives, parks it in the dead-letter queue).
pub async fn serve_batches(batches: &'static [crate::batches::Batch]) -> Result<(), lambda_runtime::Error> {
    let (ports, sdk, _) = aws_ports().await?;
    let ports = Arc::new(ports);
    let url = std::env::var("IPS_BATCH_QUEUE_URL").map_err(|_| "IPS_BATCH_QUEUE_URL is required")?;
    let queue: Arc<dyn crate::queue::Queue> = Arc::new(crate::queue::sqs::SqsQueue::new(
        LazyClient::new(&sdk, aws_sdk_sqs::Client::new),
        url,
    ));
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: lambda_runtime::LambdaEvent<BatchInput>| {
            let (ports, queue) = (ports.clone(), queue.clone());
            async move {
                let out = match event.payload {
                    BatchInput::Schedule { batch } => {
                        let b = batches
                            .iter()
                            .find(|b| b.name == batch)
                            .ok_or_else(|| format!("no batch {batch}"))?;
                        let due = b.scheduled(&ports).await?;
                        let bodies = due
                            .into_iter()
                            .map(|due| {
                                serde_json::to_string(&crate::batches::Message {
                                    batch: batch.clone(),
                                    due,
                                })
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        let enqueued = bodies.len();
                        queue.send(bodies).await?;
                        serde_json::json!({ "batch": batch, "enqueued": enqueued })
                    }
                    BatchInput::Sqs(event) => {
                        serde_json::to_value(process_batch_messages(&ports, batches, event).await)?
                    }
                };
                Ok::<_, lambda_runtime::Error>(out)
            }
        },
    ))
    .await
}

/// What the book worker is invoked with: its FIFO queue's messages, or the schedule's
/// `{"tick": "open"}` every minute.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum BookInput {
    Sqs(aws_lambda_events::event::sqs::SqsEvent),
    Tick { tick: String },
}

pub type OpenBooks =
    fn(Arc<Ports>) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<usize, crate::ApiError>> + Send>>;

/// Runs the book worker: each message of the order queue (`IPS_ORDER_QUEUE_URL`, SQS FIFO,
/// one message group per security) applied by `work` in order; on the first failure it and
/// every later message are reported failed, so SQS redelivers them in order. On the
/// schedule's tick, `open` sends the open markets' books their uncrossing.
pub async fn serve_book(
    work: crate::queue::sequencer::BookWork<Ports>,
    open: OpenBooks,
) -> Result<(), lambda_runtime::Error> {
    let (ports, _, _) = aws_ports().await?;
    let ports = Arc::new(ports);
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: lambda_runtime::LambdaEvent<BookInput>| {
            let ports = ports.clone();
            async move {
                let out = match event.payload {
                    BookInput::Tick { tick } => {
                        let sent = open(ports.clone()).await?;
                        serde_json::json!({ "tick": tick, "opened": sent })
                    }
                    BookInput::Sqs(event) => {
                        let messages = event
                            .records
                            .into_iter()
                            .map(|m| (m.message_id.unwrap_or_default(), m.body))
                            .collect();
                        let failed = crate::queue::sequencer::apply_in_order(&ports, work, messages).await;
                        let failures = failed
                            .into_iter()
                            .map(|id| {
                                let mut f = aws_lambda_events::event::sqs::BatchItemFailure::default();
                                f.item_identifier = id;
                                f
                            })
                            .collect();
                        let mut response = aws_lambda_events::event::sqs::SqsBatchResponse::default();
                        response.batch_item_failures = failures;
                        serde_json::to_value(response)?
                    }
                };
                Ok::<_, lambda_runtime::Error>(out)
            }
        },
    ))
    .await
}

/// Processes the batch queue's messages; a message that cannot be read or processed is
/// reported as failed.
async fn process_batch_messages(
    ports: &Arc<Ports>,
    batches: &[crate::batches::Batch],
    event: aws_lambda_events::event::sqs::SqsEvent,
) -> aws_lambda_events::event::sqs::SqsBatchResponse {
    let work = event.records.into_iter().map(|m| async move {
        let message: Option<crate::batches::Message> = m.body.as_deref().and_then(|b| serde_json::from_str(b).ok());
        let Some((batch, message)) = message.and_then(|msg| Some((batches.iter().find(|b| b.name == msg.batch)?, msg)))
        else {
            tracing::error!(message = ?m.message_id, "batch message that names no batch");
            return m.message_id;
        };
        match batch.process_one(ports, &message.due).await {
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, batch = batch.name, item = %message.due.id, "batch item failed; SQS will retry it");
                m.message_id
            }
        }
    });
    failures(futures_util::future::join_all(work).await.into_iter().flatten())
}

/// The SQS partial-batch answer naming the failed messages.
fn failures(failed: impl Iterator<Item = String>) -> aws_lambda_events::event::sqs::SqsBatchResponse {
    use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse};
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failed
        .map(|id| {
            let mut f = BatchItemFailure::default();
            f.item_identifier = id;
            f
        })
        .collect();
    response
}

/// Lambda functions link DynamoDB and SQS only; the embedded store is the local API's.
async fn aws_ports() -> Result<(Ports, aws_types::SdkConfig, Config), String> {
    let cfg = Config::from_env("dynamodb")?;
    if let StoreKind::Embedded(_) = cfg.store {
        return Err(
            "IPS_STORE=embedded is not available in a Lambda function: use local-api, or \
                    IPS_STORE=dynamodb with AWS_ENDPOINT_URL"
                .into(),
        );
    }
    let sdk = crate::aws::sdk_config()?;
    let (store, queue) = cfg.aws_ports(&sdk, false).await?;
    let mut ports = Ports::new(store, queue, Arc::new(SystemClock), cfg.env);
    // The functions that place orders (and the book worker, which sends the open's
    // uncrossing) get the order queue.
    if let Ok(url) = std::env::var("IPS_ORDER_QUEUE_URL") {
        ports.sequencer = Some(Arc::new(crate::queue::sequencer::SqsSequencer::new(
            LazyClient::new(&sdk, aws_sdk_sqs::Client::new),
            url,
        )));
    }
    Ok((ports, sdk, cfg))
}

fn source_ip(req: &Request) -> std::net::IpAddr {
    let ip = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.http.source_ip.clone(),
        _ => None,
    };
    ip.and_then(|s| s.parse().ok())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
}

/// The kernel's view of an API Gateway request.
fn raw_request(app: &App, req: Request) -> RawRequest {
    let ip = source_ip(&req);
    let (parts, body) = req.into_parts();
    let bytes = match body {
        Body::Empty => Bytes::new(),
        Body::Text(t) => Bytes::from(t),
        Body::Binary(b) => Bytes::from(b),
        _ => Bytes::new(),
    };
    let limit = app.body_limit(parts.uri.path(), &parts.headers);
    RawRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body: if bytes.len() > limit { Err(limit) } else { Ok(bytes) },
        ip,
    }
}

/// The IAM principal API Gateway authorized the request for, if it did.
fn iam_caller(req: &Request) -> Option<String> {
    match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => {
            let iam = ctx.authorizer.as_ref()?.iam.as_ref()?;
            iam.user_arn.clone().or_else(|| iam.caller_id.clone())
        }
        _ => None,
    }
}

fn json_error(status: http::StatusCode, message: &str) -> Response<Body> {
    let mut r = Response::new(Body::Text(serde_json::json!({ "error": message }).to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// Handles one request of the operator function. API Gateway authorizes the operator routes
/// with IAM; a request that arrives without an IAM principal (a route wired without that
/// authorization, or a function URL) is refused here too, so one wiring mistake cannot open
/// the operator API. The principal is logged with every operator request.
pub async fn handle_operator(app: Arc<App>, req: Request) -> Result<Response<Body>, lambda_http::Error> {
    let Some(caller) = iam_caller(&req) else {
        tracing::warn!(
            path = req.uri().path(),
            "operator request without IAM authorization refused"
        );
        return Ok(json_error(
            http::StatusCode::FORBIDDEN,
            "operator requests must be IAM-authorized",
        ));
    };
    tracing::info!(%caller, method = %req.method(), path = req.uri().path(), "operator request");
    if !req.uri().path().starts_with("/operator/") {
        return Ok(json_error(
            http::StatusCode::NOT_FOUND,
            "the operator function serves /operator/ only",
        ));
    }
    handle(app, req).await
}

/// Handles one API Gateway request. The webhooks a success produced are handed to SQS
/// before the function answers (a Lambda is frozen once it returns); the queue delays them
/// so the POST follows the response.
pub async fn handle(app: Arc<App>, req: Request) -> Result<Response<Body>, lambda_http::Error> {
    let head_request = req.method() == http::Method::HEAD;
    let left = time_left(&req);
    let work = app.handle(raw_request(&app, req));
    let handled = match left {
        Some(left) => tokio::time::timeout(left, work).await.ok(),
        None => Some(work.await),
    };
    let response = match handled {
        Some(handled) => {
            app.dispatch(handled.events).await;
            handled.response
        }
        None => {
            tracing::error!("internal error: the request ran out of time (a store or queue not answering?)");
            crate::http::out_of_time()
        }
    };
    let (head, bytes) = response.into_parts();
    // What hyper does for the local API: no body on a 304 or 204, nor for a HEAD request.
    let bodiless = head_request || matches!(head.status.as_u16(), 204 | 304);
    let body = match String::from_utf8(bytes.to_vec()) {
        Ok(text) if !bodiless => Body::Text(text),
        _ => Body::Empty,
    };
    Ok(Response::from_parts(head, body))
}

/// How long before the invocation's deadline a request still running is answered `1500`:
/// time enough to send that answer before Lambda ends the invocation without one (API
/// Gateway's bare 5xx).
const ANSWER_MARGIN: std::time::Duration = std::time::Duration::from_millis(1000);

/// The time the request may take: its invocation's, less [`ANSWER_MARGIN`]. `None` without a
/// deadline, or with too little left to keep a margin.
fn time_left(req: &Request) -> Option<std::time::Duration> {
    let deadline = std::time::UNIX_EPOCH + std::time::Duration::from_millis(req.lambda_context_ref()?.deadline);
    let left = deadline.duration_since(std::time::SystemTime::now()).ok()?;
    left.checked_sub(ANSWER_MARGIN).filter(|d| !d.is_zero())
}

/// Delivers a batch of queued webhooks concurrently. Messages that could not be processed
/// (a store failure while reading registrations) and messages that cannot be read at all
/// (no body, not an envelope) are reported back as failed: SQS retries them and, after
/// the queue's receive limit, moves them to the dead-letter queue, where an alarm sees them.
pub async fn deliver_batch(
    deliverer: &crate::webhooks::Deliverer,
    event: aws_lambda_events::event::sqs::SqsEvent,
) -> aws_lambda_events::event::sqs::SqsBatchResponse {
    let work = event.records.into_iter().map(|m| async move {
        let Some(body) = m.body else {
            tracing::error!(message = ?m.message_id, "webhook message without a body");
            return m.message_id;
        };
        match crate::webhooks::deliver_message(deliverer, &body).await {
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, message = ?m.message_id, "webhook message failed; SQS will retry it");
                m.message_id
            }
        }
    });
    failures(futures_util::future::join_all(work).await.into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
    use crate::queue::embedded::EmbeddedQueue;
    use crate::store::embedded::EmbeddedStore;
    use crate::Environment;
    use http::Method;
    use serde_json::Value;

    const PING: &str = include_str!("../../infra/events/ping.json");
    const CREATE_PARTY: &str = include_str!("../../infra/events/create-party.json");
    const LIST_PARTIES: &str = include_str!("../../infra/events/list-parties.json");
    const OPERATOR_CREATE_CLIENT: &str = include_str!("../../infra/events/operator-create-client.json");

    fn event(json: &str) -> Request {
        lambda_http::request::from_str(json).expect("an API Gateway HTTP API (v2) event")
    }

    /// A stand-in for the operator crate's `POST /operator/clients`: stores the client named.
    async fn create_client(ctx: OperatorCtx, req: OperatorRequest) -> Result<OpReply, OpError> {
        let id = req.body["clientId"].as_str().unwrap_or_default().to_owned();
        let key = crate::auth::ApiKey::of("unused", String::new());
        let rec = crate::auth::ClientRecord::new(id, None, key, Vec::new(), Vec::new(), Vec::new());
        ctx.ports.save_client(&rec).await?;
        Ok(OpReply::created(serde_json::json!({"clientId": rec.id})))
    }

    /// No client `id` was stored.
    async fn assert_no_client(app: &App, id: &str) {
        let stored = crate::auth::load_client(app.store.as_ref(), id).await;
        assert!(matches!(stored, Ok(None)), "{id}: {stored:?}");
    }

    fn memory_app(access: OperatorAccess) -> Arc<App> {
        let routes =
            crate::Routes::new().operator(Method::POST, "/operator/clients", crate::operator_op!(create_client));
        memory_app_of(routes, access)
    }

    /// `routes` on an in-memory store.
    fn memory_app_of(routes: crate::Routes, access: OperatorAccess) -> Arc<App> {
        let ports = Ports::new(
            Arc::new(EmbeddedStore::in_memory()),
            Arc::new(EmbeddedQueue::default()),
            Arc::new(SystemClock),
            Environment::Sandbox,
        );
        Arc::new(App::on(ports, routes).with_operator(access))
    }

    async fn never_answers(_ctx: crate::Ctx, _p: crate::Params) -> Result<crate::Reply, crate::ApiError> {
        std::future::pending().await
    }

    #[tokio::test]
    async fn a_request_still_running_near_the_deadline_is_answered_1500() {
        let routes = crate::Routes::new().op("createParty", crate::op!(never_answers));
        let app = memory_app_of(routes, OperatorAccess::Disabled);
        app.ensure_dev_client("sandbox-client", "sandbox-api-key")
            .await
            .unwrap();
        let in_ms = |ms: u64| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            u64::try_from(now.as_millis()).unwrap() + ms
        };
        let mut context = lambda_runtime::Context::default();
        context.deadline = in_ms(1300);
        let req = event(CREATE_PARTY).with_lambda_context(context);
        let started = std::time::Instant::now();
        let r = handle(app, req).await.unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_millis(1200),
            "answered before the deadline"
        );
        assert_eq!(r.status(), 500);
        let Body::Text(text) = r.body() else {
            panic!("a text body")
        };
        let body: Value = serde_json::from_str(text).unwrap();
        assert_eq!(body["statusCode"], "1500");
        assert!(
            body["statusDesc"]
                .as_str()
                .unwrap()
                .starts_with("Internal error (request "),
            "{body}"
        );
    }

    async fn flaky(_ctx: crate::Ctx, id: String) -> Result<bool, crate::ApiError> {
        match id.as_str() {
            "boom" => Err(crate::ApiError::internal("item failed")),
            _ => Ok(true),
        }
    }

    async fn nothing_due(_ports: Arc<Ports>) -> Result<Vec<crate::batches::Due>, crate::ApiError> {
        Ok(Vec::new())
    }

    const TEST_BATCH: [crate::batches::Batch; 1] = [crate::batches::Batch {
        name: "t",
        zone: crate::calendar::EASTERN,
        hours: &[18],
        every_day: false,
        due: crate::batch_due!(nothing_due),
        process: crate::batch_process!(flaky),
    }];

    #[tokio::test]
    async fn batch_messages_that_fail_or_cannot_be_read_are_reported_for_a_retry() {
        let app = memory_app(OperatorAccess::Disabled);
        app.ensure_dev_client("c1", "k").await.unwrap();
        let message = |id: &str, body: Option<&str>| {
            let mut m = aws_lambda_events::event::sqs::SqsMessage::default();
            m.message_id = Some(id.into());
            m.body = body.map(str::to_owned);
            m
        };
        let mut event = aws_lambda_events::event::sqs::SqsEvent::default();
        event.records = vec![
            message("ok", Some(r#"{"batch": "t", "clientId": "c1", "id": "1"}"#)),
            message(
                "gone-client",
                Some(r#"{"batch": "t", "clientId": "nobody", "id": "1"}"#),
            ),
            message("boom", Some(r#"{"batch": "t", "clientId": "c1", "id": "boom"}"#)),
            message("no-batch", Some(r#"{"batch": "x", "clientId": "c1", "id": "1"}"#)),
            message("unreadable", Some("{")),
            message("empty", None),
        ];
        let response = process_batch_messages(&app.ports, &TEST_BATCH, event).await;
        let failed: Vec<String> = response
            .batch_item_failures
            .into_iter()
            .map(|f| f.item_identifier)
            .collect();
        assert_eq!(failed, ["boom", "no-batch", "unreadable", "empty"]);
    }

    fn json_body(resp: &Response<Body>) -> Value {
        serde_json::from_slice(resp.body().as_ref()).expect("a JSON body")
    }

    #[test]
    fn sample_events_reach_the_kernel_as_api_gateway_sent_them() {
        let ping = raw_request(&memory_app(OperatorAccess::Disabled), event(PING));
        assert_eq!((&ping.method, ping.path.as_str()), (&Method::GET, "/v3/ping"));
        assert_eq!(ping.ip.to_string(), "203.0.113.10");
        assert_eq!(
            ping.headers.get("authorization").and_then(|v| v.to_str().ok()),
            Some("Bearer sandbox-client:sandbox-api-key")
        );

        let party = raw_request(&memory_app(OperatorAccess::Disabled), event(CREATE_PARTY));
        assert_eq!((&party.method, party.path.as_str()), (&Method::PUT, "/v3/createParty"));
        let body = party.body.expect("a body under the limit");
        assert!(body.starts_with(b"firstName=Ann&lastName=Lee&"), "{body:?}");

        let list = raw_request(&memory_app(OperatorAccess::Disabled), event(LIST_PARTIES));
        assert_eq!(list.path, "/v3/parties");
        assert_eq!(list.query.as_deref(), Some("limit=5&offset=0"));
    }

    /// PING with `edit` applied, through the conversion lambda_http makes after ours.
    fn converted(edit: impl FnOnce(&mut Value)) -> Request {
        let mut json: Value = serde_json::from_str(PING).expect("JSON");
        edit(&mut json);
        let mut event: LambdaRequest = serde_json::from_value(json).expect("a v2 event");
        convertible(&mut event);
        Request::from(event)
    }

    #[test]
    fn events_lambda_http_would_panic_on_reach_the_kernel_as_sent() {
        let app = memory_app(OperatorAccess::Disabled);
        let text = "a \"b\" <c> #d `e` é {f}|^\\";
        let query = format!("filter={{\"firstName\":\"Ann\"}}&x={text}&y=%41+1");
        let raw = raw_request(&app, converted(|e| e["rawQueryString"] = query.as_str().into()));
        let params = crate::Params::from_query(raw.query.as_deref()).expect("a query");
        assert_eq!(params.text(&["filter"]).unwrap(), r#"{"firstName":"Ann"}"#);
        assert_eq!(params.text(&["x"]).unwrap(), text);
        assert_eq!(params.text(&["y"]).unwrap(), "A 1");

        // One byte to encode, and nothing else.
        for (sent, read) in [("\u{1}", "%01"), ("\u{7f}", "%7F"), (" ", "%20")] {
            let raw = raw_request(&app, converted(|e| e["rawQueryString"] = sent.into()));
            assert_eq!(raw.query.as_deref(), Some(read), "{sent:?}");
        }

        let raw = raw_request(&app, converted(|e| e["rawPath"] = "/v3/parties/P \"1\"?".into()));
        assert_eq!(raw.path, "/v3/parties/P%20%221%22%3F");

        let raw = raw_request(
            &app,
            converted(|e| {
                e["isBase64Encoded"] = true.into();
                e["body"] = "firstName=Ann!".into();
            }),
        );
        assert_eq!(raw.body.expect("a body").as_ref(), b"firstName=Ann!");
    }

    #[tokio::test]
    async fn the_documented_function_serves_its_openapi_document_and_its_routes() {
        let app = memory_app(OperatorAccess::Disabled);
        app.ensure_dev_client("sandbox-client", "sandbox-api-key")
            .await
            .expect("dev client");
        let document = Arc::new(std::sync::OnceLock::new());
        let render: Render = |routes, version| serde_json::json!({"v": version, "ops": routes.op_names().len()});
        let get = converted(|e| e["rawPath"] = "/openapi.json".into());
        let resp = handle_documented(app.clone(), document.clone(), render, get)
            .await
            .expect("a response");
        assert_eq!(resp.status(), 200);
        assert_eq!(json_body(&resp)["ops"], 0);
        let resp = handle_documented(app, document, render, event(PING))
            .await
            .expect("a response");
        assert_eq!(json_body(&resp)["statusCode"], "101");
    }

    #[tokio::test]
    async fn no_body_goes_with_a_head_request() {
        let app = memory_app(OperatorAccess::Disabled);
        let head = converted(|e| e["requestContext"]["http"]["method"] = "HEAD".into());
        let resp = handle(app, head).await.expect("a response");
        assert_eq!(resp.status(), 404);
        assert!(resp.body().is_empty());
    }

    #[tokio::test]
    async fn ping_event_answers_the_sandbox_client() {
        let app = memory_app(OperatorAccess::Disabled);
        app.ensure_dev_client("sandbox-client", "sandbox-api-key")
            .await
            .expect("dev client");
        let resp = handle(app, event(PING)).await.expect("a response");
        assert_eq!(resp.status(), 200);
        assert_eq!(json_body(&resp)["statusCode"], "101");
    }

    #[tokio::test]
    async fn operator_function_serves_iam_authorized_requests_only() {
        let app = memory_app(OperatorAccess::Trusted);
        let resp = handle_operator(app.clone(), event(OPERATOR_CREATE_CLIENT))
            .await
            .expect("a response");
        assert_eq!(resp.status(), 201);
        assert_eq!(json_body(&resp)["clientId"], "acme");

        let mut unsigned: Value = serde_json::from_str(OPERATOR_CREATE_CLIENT).expect("JSON");
        unsigned["requestContext"]
            .as_object_mut()
            .map(|ctx| ctx.remove("authorizer"));
        unsigned["body"] = Value::String(r#"{"clientId": "intruder"}"#.into());
        let resp = handle_operator(app.clone(), event(&unsigned.to_string()))
            .await
            .expect("a response");
        assert_eq!(resp.status(), 403);
        assert_no_client(&app, "intruder").await;
    }

    #[tokio::test]
    async fn client_functions_do_not_serve_the_operator_api() {
        let app = memory_app(OperatorAccess::Disabled);
        let resp = handle(app.clone(), event(OPERATOR_CREATE_CLIENT))
            .await
            .expect("a response");
        assert_eq!(resp.status(), 404);
        assert_no_client(&app, "acme").await;
    }

    #[tokio::test]
    async fn unreadable_webhook_messages_are_reported_failed_for_the_dead_letter_queue() {
        use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
        let app = memory_app(OperatorAccess::Disabled);
        let deliverer = crate::webhooks::Deliverer::new(app.store.clone(), Environment::Sandbox.url_policy());
        let message = |id: &str, body: Option<&str>| {
            let mut m = SqsMessage::default();
            m.message_id = Some(id.into());
            m.body = body.map(str::to_owned);
            m
        };
        let mut batch = SqsEvent::default();
        batch.records = vec![
            message("not-json", Some("{not json")),
            message("no-body", None),
            message("not-an-envelope", Some(r#"{"x": 1}"#)),
        ];
        let response = deliver_batch(&deliverer, batch).await;
        let failed: Vec<_> = response
            .batch_item_failures
            .iter()
            .map(|f| f.item_identifier.as_str())
            .collect();
        assert_eq!(failed, ["not-json", "no-body", "not-an-envelope"]);
    }
}
