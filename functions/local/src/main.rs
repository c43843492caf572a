//! `local-api`: every endpoint group on one port, for development. Embedded store by default
//! (`IPS_DATA_DIR`), or DynamoDB + SQS with `IPS_STORE=dynamodb`. Webhooks are delivered
//! in-process once the response has been written.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::Method;
use http_body_util::{BodyDataStream, BodyExt, Either, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use shared::app::OperatorAccess;
use shared::blobs::{BlobError, Served, LOCAL_PREFIX};
use shared::clock::SystemClock;
use shared::config::{Config, StoreKind};
use shared::http::{Handled, RawRequest};
use shared::queue::sequencer::LocalSequencer;
use shared::webhooks::{Deliverer, Envelope};
use shared::{App, Environment, Ports};
use tokio::io::AsyncReadExt;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEFAULT_BIND: &str = "127.0.0.1:3000";
const DEFAULT_CLIENT_ID: &str = "sandbox-client";
const DEFAULT_API_KEY: &str = "sandbox-api-key";
const DEFAULT_OPERATOR_TOKEN: &str = "sandbox-operator-token";

/// A credential of the local API (`IPS_DEV_CLIENT_ID`, `IPS_DEV_API_KEY`,
/// `IPS_OPERATOR_TOKEN`) as its variable holds it (`value`): any non-empty text without `:`
/// (CONTRACT), the README's sandbox default when unset. Set but empty, or unset in
/// production, it stops the start: a default printed in the README must never guard a
/// production service, nor an unset secret fall back to one.
fn credential(name: &str, value: Option<String>, default: &str, env: Environment) -> Result<String, String> {
    match value {
        Some(v) if v.is_empty() => Err(format!("{name} is set but empty")),
        Some(v) if v.contains(':') => Err(format!("{name} must not contain ':'")),
        Some(v) => Ok(v),
        None if env == Environment::Production => Err(format!("{name} must be set in production")),
        None => Ok(default.to_owned()),
    }
}

fn var(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_owned())
}

/// A response body that hands its webhooks to the queue once hyper is done with it
/// (written, or the client went away: a `101` was decided either way).
struct DispatchOnDrop {
    body: Full<Bytes>,
    after: Option<(Arc<App>, Vec<Envelope>)>,
}

impl hyper::body::Body for DispatchOnDrop {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for DispatchOnDrop {
    fn drop(&mut self) {
        if let Some((app, events)) = self.after.take() {
            if !events.is_empty() {
                tokio::spawn(async move { app.dispatch(events).await });
            }
        }
    }
}

/// A document's bytes, read from its file a chunk at a time as hyper sends them.
type FileBody = StreamBody<BoxStream<'static, std::io::Result<Frame<Bytes>>>>;

fn file_body(file: tokio::fs::File) -> FileBody {
    let chunks = futures_util::stream::try_unfold(file, |mut file| async move {
        let mut buf = BytesMut::with_capacity(64 << 10);
        let n = file.read_buf(&mut buf).await?;
        Ok((n > 0).then(|| (Frame::data(buf.freeze()), file)))
    });
    StreamBody::new(chunks.boxed())
}

/// A signed URL of the local document store (its signature is the credential).
async fn serve_blob(app: &App, path: &str, query: Option<&str>) -> Option<hyper::Response<Body>> {
    let served = app.blobs.as_ref()?.serve(path, query).await?;
    let response = hyper::Response::builder();
    Some(
        match served {
            Served::Found {
                file,
                len,
                content_type,
            } => response
                .header(CONTENT_TYPE, content_type)
                .header(CONTENT_LENGTH, len)
                .body(Either::Right(file_body(file))),
            refused => {
                let (status, text) = refused.refusal()?;
                return Some(plain(status, text));
            }
        }
        .expect("a valid response head"),
    )
}

/// A `PUT` to a signed upload URL of the local document store, streamed to its file. It
/// runs in a task of its own: a client that goes away mid-body leaves no partial file.
async fn receive_blob(app: Arc<App>, req: hyper::Request<Incoming>) -> Option<hyper::Response<Body>> {
    let (parts, body) = req.into_parts();
    let chunks = BodyDataStream::new(body)
        .map(|chunk| chunk.map_err(|e| BlobError(e.to_string())))
        .boxed();
    let received = tokio::spawn(async move {
        let blobs = app.blobs.as_ref()?;
        blobs.receive(parts.uri.path(), parts.uri.query(), chunks).await
    })
    .await
    .ok()??;
    let (status, text) = received.status();
    Some(plain(status, text))
}

/// A plain-text answer of the document store.
fn plain(status: u16, text: &'static str) -> hyper::Response<Body> {
    hyper::Response::builder()
        .status(status)
        .header(CONTENT_TYPE, "text/plain")
        .body(Either::Left(DispatchOnDrop {
            body: Full::new(Bytes::from_static(text.as_bytes())),
            after: None,
        }))
        .expect("a valid response head")
}

/// `GET /openapi.json`: the document of every route this process serves.
fn openapi(app: &App) -> hyper::Response<Body> {
    let doc = service::openapi(&app.routes, app.ports.version);
    hyper::Response::builder()
        .status(200)
        .header(CONTENT_TYPE, "application/json")
        .body(Either::Left(DispatchOnDrop {
            body: Full::new(Bytes::from(doc.to_string())),
            after: None,
        }))
        .expect("a valid response head")
}

/// An API response, or a document streamed from its file.
type Body = Either<DispatchOnDrop, FileBody>;

async fn serve(
    app: Arc<App>,
    req: hyper::Request<Incoming>,
    peer: SocketAddr,
    deadline: tokio::time::Instant,
) -> Result<hyper::Response<Body>, Infallible> {
    if req.uri().path() == shared::http::OPENAPI_PATH && req.method() == Method::GET {
        return Ok(openapi(&app));
    }
    if req.uri().path().starts_with(LOCAL_PREFIX) {
        if req.method() == Method::GET {
            if let Some(response) = serve_blob(&app, req.uri().path(), req.uri().query()).await {
                return Ok(response);
            }
        } else if req.method() == Method::PUT {
            return Ok(receive_blob(app, req).await.unwrap_or_else(|| plain(404, "Not found")));
        }
    }
    // The request runs in a task of its own, body included: a client that disconnects
    // drops this future, never the work (part 1). The answer carries its webhooks, which go
    // out when it is dropped, written or not.
    let (parts, body) = req.into_parts();
    if shared::http::is_health(&parts.method, parts.uri.path()) {
        // A health check changes nothing: there is no work for a disconnect to cut short.
        let handled = run(&app, parts, body, peer, deadline).await;
        return Ok(with_webhooks(handled, Some(app)).map(Either::Left));
    }
    let (answer, answered) = tokio::sync::oneshot::channel();
    let worker = app.clone();
    tokio::spawn(async move {
        let handled = run(&worker, parts, body, peer, deadline).await;
        let _ = answer.send(with_webhooks(handled, Some(worker)));
    });
    let response = answered.await.unwrap_or_else(|_| {
        let handled = Handled {
            response: shared::http::internal_error(),
            events: Vec::new(),
        };
        with_webhooks(handled, None)
    });
    Ok(response.map(Either::Left))
}

/// The response whose body hands its webhooks over once dropped.
fn with_webhooks(handled: Handled, app: Option<Arc<App>>) -> hyper::Response<DispatchOnDrop> {
    let (head, bytes) = handled.response.into_parts();
    let body = DispatchOnDrop {
        body: Full::new(bytes),
        after: app.map(|app| (app, handled.events)),
    };
    hyper::Response::from_parts(head, body)
}

/// The request-body bytes the local API holds at once, all requests together
/// (`IPS_BODY_MEMORY_MB`, set at start). Each request is held to its own limit (1 MiB, 50 MiB
/// for uploads), but nothing else bounded how many bodies arrive at once: a few hundred
/// connections that stop mid-body, credentials or not, could take gigabytes. Past it, bodies
/// wait for memory (their senders are slowed down), and one that cannot finish within the
/// read timeout is answered 408, as any late body.
static BODY_MEMORY: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// A request's body, read whole within its limit, and the share of [`BODY_MEMORY`] it holds
/// until the request is done. `Err(())` when it goes over the limit (or the connection fails).
async fn read_body(body: Incoming, limit: usize) -> Result<(Bytes, Option<tokio::sync::SemaphorePermit<'static>>), ()> {
    let mut body = std::pin::pin!(Limited::new(body, limit));
    let mut bytes = BytesMut::new();
    let mut held: Option<tokio::sync::SemaphorePermit<'static>> = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| ())?.into_data() else {
            continue;
        };
        let size = u32::try_from(data.len()).map_err(|_| ())?;
        let share = BODY_MEMORY.acquire_many(size).await.map_err(|_| ())?;
        match &mut held {
            Some(h) => h.merge(share),
            None => held = Some(share),
        }
        bytes.extend_from_slice(&data);
    }
    Ok((bytes.freeze(), held))
}

/// Reads the body (whole within the deadline, or the request is never started) and runs the
/// request: its response and the webhooks to send after it.
async fn run(
    app: &Arc<App>,
    parts: http::request::Parts,
    body: Incoming,
    peer: SocketAddr,
    deadline: tokio::time::Instant,
) -> Handled {
    let limit = app.body_limit(parts.uri.path(), &parts.headers);
    let (body, _memory) = match tokio::time::timeout_at(deadline, read_body(body, limit)).await {
        Ok(Ok((bytes, memory))) => (Ok(bytes), memory),
        Ok(Err(())) => (Err(limit), None),
        Err(_) => {
            return Handled {
                response: shared::http::request_timeout(),
                events: Vec::new(),
            }
        }
    };
    app.handle(RawRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body,
        ip: peer.ip(),
    })
    .await
}

/// Waits before the next accept after a failure (out of file descriptors, say): growing
/// pauses up to a second, and one log line per second at most, instead of a busy loop.
struct AcceptBackoff {
    pause: Duration,
    last_log: Option<std::time::Instant>,
    suppressed: u64,
}

impl AcceptBackoff {
    fn new() -> Self {
        AcceptBackoff {
            pause: Duration::ZERO,
            last_log: None,
            suppressed: 0,
        }
    }

    async fn failed(&mut self, e: &std::io::Error) {
        let now = std::time::Instant::now();
        if self
            .last_log
            .is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1))
        {
            tracing::warn!(error = %e, suppressed = self.suppressed, "accept failed; backing off");
            self.last_log = Some(now);
            self.suppressed = 0;
        } else {
            self.suppressed += 1;
        }
        self.pause = (self.pause * 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
        tokio::time::sleep(self.pause).await;
    }

    fn succeeded(&mut self) {
        self.pause = Duration::ZERO;
    }
}

/// Every second, the books whose market has opened since they rested crossed orders.
async fn open_books(app: Arc<App>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        if let Err(e) = service::open_books(app.ports.clone()).await {
            tracing::error!(error = %e, "order books not opened");
        }
    }
}

/// How old an outbox entry must be for a sweep to send it again: long enough for a delivery
/// waiting in the queue to have been attempted.
const OUTBOX_AGE: Duration = Duration::from_secs(300);

/// The start-up sweep's age. The embedded store's file is this process's alone, so what its
/// outbox holds at start a crash left: sent at once. A DynamoDB table may be shared with other
/// running instances, whose entries are still on their way: only the stale ones go.
fn startup_outbox_age(store: &StoreKind) -> Duration {
    match store {
        StoreKind::Embedded(_) => Duration::ZERO,
        StoreKind::DynamoDb => OUTBOX_AGE,
    }
}

/// Every minute, re-sends outbox entries older than [`OUTBOX_AGE`].
async fn sweep_outbox(app: Arc<App>) {
    let mut every = tokio::time::interval(Duration::from_secs(60));
    every.tick().await;
    loop {
        every.tick().await;
        match app.sweep_outbox(OUTBOX_AGE).await {
            Ok(0) => {}
            Ok(n) => tracing::warn!(webhooks = n, "outbox: webhooks re-sent"),
            Err(e) => tracing::error!(error = %e, "outbox sweep failed"),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    shared::logging::init(false);
    let cfg = Config::from_env("embedded")?;
    let bind = var("IPS_BIND", DEFAULT_BIND);
    let credential = |name: &str, default| credential(name, std::env::var(name).ok(), default, cfg.env);
    let client_id = credential("IPS_DEV_CLIENT_ID", DEFAULT_CLIENT_ID)?;
    let api_key = credential("IPS_DEV_API_KEY", DEFAULT_API_KEY)?;
    let operator_token = credential("IPS_OPERATOR_TOKEN", DEFAULT_OPERATOR_TOKEN)?;
    let read_timeout = match var("IPS_READ_TIMEOUT_SECS", "30").parse::<u64>() {
        Ok(secs) if secs > 0 => Duration::from_secs(secs),
        _ => return Err("IPS_READ_TIMEOUT_SECS must be a whole number of seconds above 0".into()),
    };
    match var("IPS_BODY_MEMORY_MB", "512").parse::<usize>() {
        // At least the largest body one request may send (an upload, 50 MiB).
        Ok(mb) if (50..=65_536).contains(&mb) => BODY_MEMORY.add_permits(mb << 20),
        _ => return Err("IPS_BODY_MEMORY_MB must be a whole number of megabytes from 50 to 65536".into()),
    }

    let public_url = var("IPS_PUBLIC_URL", &format!("http://{bind}"));
    let (store, queue, blobs) = cfg.local_ports(&public_url).await?;
    let routes = service::all_routes().checked().map_err(|e| e.to_string())?;
    let mut ports = Ports::new(store.clone(), queue.clone(), Arc::new(SystemClock), cfg.env);
    ports.blobs = Some(blobs);
    // Locally, each security's book is an in-process lane (the same order as SQS FIFO gives).
    ports.sequencer = Some(Arc::new(LocalSequencer::new(service::BOOK_WORK)));
    let app = Arc::new(App::on(ports, routes).with_operator(OperatorAccess::Token(operator_token.clone())));
    app.ensure_dev_client(&client_id, &api_key)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(shared::webhooks::run_worker(
        queue,
        Deliverer::new(store, cfg.env.url_policy()),
    ));
    // Webhooks a crash left in the outbox go out before anything new is served; the timer
    // catches those whose hand-over or attempt failed while running.
    match app.sweep_outbox(startup_outbox_age(&cfg.store)).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(webhooks = n, "outbox: webhooks left by the last run sent"),
        Err(e) => tracing::error!(error = %e, "outbox sweep failed at start-up"),
    }
    tokio::spawn(sweep_outbox(app.clone()));
    // Books that rested crossed orders while closed match at their market's open: always,
    // schedules or not (CONTRACT, "Batches and schedules").
    tokio::spawn(open_books(app.clone()));
    // Batches run when the operator asks; on the wall clock only when asked to (CONTRACT).
    let schedules = var("IPS_SCHEDULES", "off");
    match schedules.as_str() {
        "on" => {
            tokio::spawn(shared::batches::run_schedules(
                app.ports.clone(),
                service::BATCHES.to_vec(),
            ));
        }
        "off" => {}
        other => return Err(format!("IPS_SCHEDULES must be on or off, not {other}")),
    }

    let listener = tokio::net::TcpListener::bind(&bind)
        .await
        .map_err(|e| format!("bind {bind}: {e}"))?;
    println!(
        "local-api listening on http://{bind} ({} environment, {:?} store)",
        cfg.env.name(),
        cfg.store
    );
    println!("  sandbox client:  Authorization: Bearer {client_id}:{api_key}");
    println!("  operator token:  Authorization: Bearer {operator_token}");
    println!("  schedules:       {schedules} (IPS_SCHEDULES; off: batches run on POST /operator/batches/<name>/run)");
    let mut backoff = AcceptBackoff::new();
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                backoff.failed(&e).await;
                continue;
            }
        };
        backoff.succeeded();
        // Each answer is one write: sent at once, never held back for the client's ACK.
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        tokio::spawn(async move {
            // Each request of the connection must arrive whole within the read timeout:
            // its headers (hyper's header timeout) and then its body (the deadline).
            let svc = service_fn(move |req| {
                let deadline = tokio::time::Instant::now() + read_timeout;
                serve(app.clone(), req, peer, deadline)
            });
            // A client that stops sending (FIN) after its request is still answered, and its
            // request read whole: half-close keeps hyper from treating that as a disconnect.
            let conn = http1::Builder::new()
                .half_close(true)
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout)
                .serve_connection(TokioIo::new(stream), svc);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_up_sweep_leaves_other_instances_entries_on_a_shared_table() {
        let embedded = StoreKind::Embedded(std::path::PathBuf::from("data"));
        assert_eq!(startup_outbox_age(&embedded), Duration::ZERO);
        assert_eq!(startup_outbox_age(&StoreKind::DynamoDb), OUTBOX_AGE);
    }

    #[test]
    fn credentials_have_no_public_default_in_production_and_are_never_empty() {
        let sandbox = |v: Option<&str>| credential("K", v.map(str::to_owned), "dflt", Environment::Sandbox);
        let production = |v: Option<&str>| credential("K", v.map(str::to_owned), "dflt", Environment::Production);
        assert_eq!(sandbox(None).as_deref(), Ok("dflt"));
        assert_eq!(sandbox(Some("mine")).as_deref(), Ok("mine"));
        assert_eq!(production(Some("mine")).as_deref(), Ok("mine"));
        for refused in [
            sandbox(Some("")),
            sandbox(Some("a:b")),
            production(None),
            production(Some("")),
        ] {
            assert!(refused.is_err(), "{refused:?}");
        }
    }
}
