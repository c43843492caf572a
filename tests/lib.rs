//! The black-box API suite's harness: a fresh service per test on the embedded store or on
//! DynamoDB + SQS (moto's server, started by `tests/run.sh`), driven in process through the
//! same kernel the Lambda functions and the local API use, plus a real HTTP listener for
//! webhooks. Each deployed function gets its own `App`, built from the same description its
//! `main.rs` serves (`service::FUNCTIONS`: routes and ports), and each request goes to the
//! function API Gateway would send it to; so a port a function's code needs but its
//! `main.rs` does not provide fails here.

pub mod params;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use shared::app::OperatorAccess;
use shared::auth::ClientCache;
use shared::blobs::{Blobs, DirBlobs, S3Blobs, Served};
use shared::clock::SettableClock;
use shared::http::RawRequest;
use shared::queue::embedded::EmbeddedQueue;
use shared::queue::sequencer::{apply_in_order, BookMessage, LocalSequencer, Sequencer, SqsSequencer};
use shared::queue::sqs::SqsQueue;
use shared::queue::Queue;
use shared::queue::QueueError;
use shared::store::dynamo::DynamoStore;
use shared::store::embedded::EmbeddedStore;
use shared::store::Store;
use shared::webhooks::Deliverer;
use shared::{App, Environment, Function, Ports};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

pub const OPERATOR_TOKEN: &str = "test-operator-token";

/// Which backend a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Embedded,
    DynamoDb,
}

/// Runs a test body once per backend: `both!(name, |t| async move { ... });`.
#[macro_export]
macro_rules! both {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn embedded() {
                ($body)($crate::TestApp::new($crate::Backend::Embedded).await).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn dynamodb() {
                ($body)($crate::TestApp::new($crate::Backend::DynamoDb).await).await
            }
        }
    };
}

/// A response as a client sees it.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub json: Value,
}

impl Resp {
    /// The body `statusCode`.
    pub fn code(&self) -> &str {
        self.json["statusCode"].as_str().unwrap_or("")
    }
    pub fn desc(&self) -> &str {
        self.json["statusDesc"].as_str().unwrap_or("")
    }
    /// The record of an insert-array response under `key`.
    pub fn inserted(&self, key: &str) -> &Value {
        &self.json[key][1][0]
    }
}

/// A fresh service with its own store, queue and sandbox client.
pub struct TestApp {
    pub backend: Backend,
    /// The investors function's application (its ports are every function's).
    pub app: Arc<App>,
    /// Every deployed function's application, on the same store, queue and blob store.
    functions: Vec<(Function, Arc<App>)>,
    pub client_id: String,
    pub api_key: String,
    /// Every function's clock: the system's until a test sets it.
    pub clock: Arc<SettableClock>,
    /// The order books' lanes, shared by every function as one process's are.
    books: Books,
    /// Whether its requests go to the cost log (see [`TestApp::without_cost_log`]).
    log_costs: bool,
}

/// The order books' sequencer: in-process lanes beside the embedded store; beside DynamoDB,
/// the SQS FIFO adapter the Lambda functions use, drained by a consumer that applies
/// batches as the book worker does.
enum Books {
    Local(Arc<LocalSequencer<Ports>>),
    Fifo(Arc<FifoBooks>),
}

/// SQS FIFO books: the adapter, and the messages sent but not yet applied.
struct FifoBooks {
    inner: SqsSequencer,
    sqs: aws_sdk_sqs::Client,
    url: String,
    pending: AtomicUsize,
}

#[async_trait::async_trait]
impl Sequencer<Ports> for FifoBooks {
    async fn send(&self, ports: &Arc<Ports>, msg: BookMessage) -> Result<(), QueueError> {
        self.pending.fetch_add(1, Ordering::SeqCst);
        self.inner.send(ports, msg).await
    }
}

impl FifoBooks {
    async fn create(name: &str) -> FifoBooks {
        use aws_sdk_sqs::types::QueueAttributeName;
        let sdk = shared::aws::sdk_config().expect("the AWS environment");
        let sqs = aws_sdk_sqs::Client::new(&sdk);
        let url = sqs
            .create_queue()
            .queue_name(format!("{name}-orders.fifo"))
            .attributes(QueueAttributeName::FifoQueue, "true")
            .attributes(QueueAttributeName::VisibilityTimeout, "2")
            .send()
            .await
            .expect("test order queue")
            .queue_url
            .expect("its URL");
        FifoBooks {
            inner: SqsSequencer::new(sqs.clone(), url.clone()),
            sqs,
            url,
            pending: AtomicUsize::new(0),
        }
    }

    /// The book worker's loop: receive up to 10, apply them in order, delete the applied.
    async fn consume(self: Arc<Self>, ports: Arc<Ports>) {
        loop {
            let received = self
                .sqs
                .receive_message()
                .queue_url(&self.url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .send()
                .await;
            let Ok(received) = received else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let messages = received.messages.unwrap_or_default();
            let batch = messages
                .iter()
                .map(|m| (m.message_id.clone().unwrap_or_default(), m.body.clone()))
                .collect();
            let failed = apply_in_order(&ports, service::BOOK_WORK, batch).await;
            for m in messages
                .iter()
                .filter(|m| !failed.contains(&m.message_id.clone().unwrap_or_default()))
            {
                let receipt = m.receipt_handle.clone().unwrap_or_default();
                if self
                    .sqs
                    .delete_message()
                    .queue_url(&self.url)
                    .receipt_handle(receipt)
                    .send()
                    .await
                    .is_ok()
                {
                    self.pending.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }
}

impl Books {
    fn sequencer(&self) -> Arc<dyn Sequencer<Ports>> {
        match self {
            Books::Local(l) => l.clone(),
            Books::Fifo(f) => f.clone(),
        }
    }

    async fn idle(&self) {
        match self {
            Books::Local(l) => l.idle().await,
            Books::Fifo(f) => {
                while f.pending.load(Ordering::SeqCst) > 0 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
}

/// A store whose order-book reads take longer (see [`TestApp::two_instances`]).
struct SlowBooks {
    inner: Arc<dyn Store>,
    delay: Duration,
}

#[async_trait::async_trait]
impl Store for SlowBooks {
    async fn get(&self, key: &shared::store::Key) -> Result<Option<shared::store::Item>, shared::store::StoreError> {
        self.inner.get(key).await
    }
    async fn write(&self, writes: Vec<shared::store::Write>) -> Result<(), shared::store::StoreError> {
        self.inner.write(writes).await
    }
    async fn update(
        &self,
        key: &shared::store::Key,
        ops: Vec<shared::store::Update>,
        cond: Option<shared::store::Cond>,
    ) -> Result<shared::store::Item, shared::store::StoreError> {
        self.inner.update(key, ops, cond).await
    }
    async fn query(&self, q: &shared::store::Query) -> Result<shared::store::Page, shared::store::StoreError> {
        let page = self.inner.query(q).await;
        // A book's partition: `{client}#BOOK#{security}` (shared::records::ats).
        if q.pk.contains("#BOOK#") {
            tokio::time::sleep(self.delay).await;
        }
        page
    }
    fn requests(&self) -> u64 {
        self.inner.requests()
    }
}

/// Credentials of a client.
#[derive(Clone, Debug)]
pub struct Creds {
    pub id: String,
    pub key: String,
}

/// A `multipart/form-data` body: answers its content type and bytes.
pub fn multipart_body(fields: &[(&str, &str)], files: &[(&str, &str, &[u8])]) -> (String, Bytes) {
    const B: &str = "ips-test-boundary-7f3a";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{B}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    for (name, file, bytes) in files {
        body.extend_from_slice(
            format!("--{B}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{B}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={B}"), Bytes::from(body))
}

impl Creds {
    pub fn bearer(&self) -> String {
        format!("Bearer {}:{}", self.id, self.key)
    }
}

/// Where the in-process local blob store says it is served.
pub const BLOB_BASE: &str = "http://local.test";

type Backends = (Arc<dyn Store>, Arc<dyn Queue>, Arc<dyn Blobs>);

async fn backends(backend: Backend) -> Backends {
    match backend {
        Backend::Embedded => embedded_ports(),
        Backend::DynamoDb => aws_ports().await,
    }
}

fn embedded_ports() -> Backends {
    let dir = std::env::temp_dir().join(format!("ips-test-blobs-{}", uuid::Uuid::new_v4().simple()));
    let blobs = DirBlobs::open(dir, BLOB_BASE).expect("blob directory");
    (
        Arc::new(EmbeddedStore::in_memory()),
        Arc::new(EmbeddedQueue::default()),
        Arc::new(blobs),
    )
}

async fn aws_ports() -> Backends {
    if std::env::var("AWS_ENDPOINT_URL").is_err() {
        panic!("the DynamoDB variant needs moto's server: run the suite with tests/run.sh (it sets AWS_ENDPOINT_URL)");
    }
    let sdk = shared::aws::sdk_config().expect("the AWS environment");
    let name = format!("t-{}", uuid::Uuid::new_v4().simple());
    let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(&sdk), name.clone());
    store.ensure_table().await.expect("test table");
    let queue = SqsQueue::ensure(aws_sdk_sqs::Client::new(&sdk), &name)
        .await
        .expect("test queue");
    let blobs = S3Blobs::new(&sdk, name);
    blobs.ensure_bucket().await.expect("test bucket");
    (Arc::new(store), Arc::new(queue), Arc::new(blobs))
}

impl TestApp {
    pub async fn new(backend: Backend) -> TestApp {
        Self::with_env(backend, Environment::Sandbox).await
    }

    pub async fn with_env(backend: Backend, env: Environment) -> TestApp {
        let clients = Arc::new(ClientCache::new(Duration::from_secs(60)));
        Self::on(backend, env, backends(backend).await, clients, None).await
    }

    /// Two instances of the service (as two processes, or two Lambda instances of each
    /// function) on one store, each with its own order-book lanes, for one sandbox client;
    /// every read of an order book takes `book_reads` longer, to widen the windows between
    /// a book worker's reads and its writes.
    pub async fn two_instances(backend: Backend, book_reads: Duration) -> (TestApp, TestApp) {
        let (store, queue, blobs) = backends(backend).await;
        let store: Arc<dyn Store> = Arc::new(SlowBooks {
            inner: store,
            delay: book_reads,
        });
        let clients = Arc::new(ClientCache::new(Duration::from_secs(60)));
        let shared = (store, queue, blobs);
        let first = Self::on(backend, Environment::Sandbox, shared.clone(), clients.clone(), None).await;
        let creds = Some(first.creds());
        let second = Self::on(backend, Environment::Sandbox, shared, clients, creds).await;
        (first, second)
    }

    /// The service on these backends, with a new sandbox client or `creds`' one.
    async fn on(
        backend: Backend,
        env: Environment,
        (store, queue, blobs): Backends,
        // Processes share nothing in AWS but the store; the client cache is shared here only
        // because the operator's changes to a client reach other functions after at most the
        // cache's 60 s, and the tests do not wait for that.
        clients: Arc<ClientCache>,
        creds: Option<Creds>,
    ) -> TestApp {
        let clock = Arc::new(SettableClock::system());
        let books = match backend {
            Backend::Embedded => Books::Local(Arc::new(LocalSequencer::new(service::BOOK_WORK))),
            Backend::DynamoDb => Books::Fifo(Arc::new(
                FifoBooks::create(&format!("t-{}", uuid::Uuid::new_v4().simple())).await,
            )),
        };
        let sequencer = books.sequencer();
        let functions: Vec<(Function, Arc<App>)> = service::FUNCTIONS
            .iter()
            .map(|f| {
                let mut ports = Ports::new(store.clone(), queue.clone(), clock.clone(), env);
                ports.blobs = Some(blobs.clone());
                ports.clients = clients.clone();
                ports.sequencer = Some(sequencer.clone());
                let app = f
                    .app(ports, OperatorAccess::Token(OPERATOR_TOKEN.into()))
                    .unwrap_or_else(|e| panic!("{}: {e}", f.name));
                (*f, Arc::new(app))
            })
            .collect();
        let app = functions[0].1.clone();
        let Creds {
            id: client_id,
            key: api_key,
        } = match creds {
            Some(c) => c,
            None => {
                let id = format!("dev-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
                let key = shared::auth::random_secret();
                app.ensure_dev_client(&id, &key).await.expect("dev client");
                Creds { id, key }
            }
        };
        if let Books::Fifo(fifo) = &books {
            tokio::spawn(fifo.clone().consume(app.ports.clone()));
        }
        tokio::spawn(shared::webhooks::run_worker(
            queue,
            Deliverer::new(store, env.url_policy()),
        ));
        TestApp {
            backend,
            app,
            functions,
            client_id,
            api_key,
            clock,
            books,
            log_costs: true,
        }
    }

    /// The function API Gateway sends this request to: the operator API's, the legacy
    /// prefix's, else the group that registers the route (the investors function takes the
    /// rest: `$default`, ping, status, signed document URLs).
    pub fn function_for(&self, method: &Method, path: &str) -> &Arc<App> {
        let by_name = |name: &str| {
            self.functions
                .iter()
                .find(|(f, _)| f.name == name)
                .map(|(_, app)| app)
                .expect("a deployed function")
        };
        if path.starts_with("/operator") {
            return by_name("operator");
        }
        if path.starts_with("/tapiv3/index.php/") {
            return by_name("legacy");
        }
        self.functions
            .iter()
            .filter(|(f, _)| !f.operator && f.name != "legacy")
            .find(|(_, app)| app.routes.find(method, path).is_some())
            .map_or(&self.app, |(_, app)| app)
    }

    /// Waits until every order handed to a book so far has been matched or rested.
    pub async fn settle(&self) {
        tokio::time::timeout(Duration::from_secs(30), self.books.idle())
            .await
            .expect("the order books settle within 30 s");
    }

    /// What the local API does every second: books whose market has opened uncross; then
    /// waits for them.
    pub async fn open_books(&self) -> usize {
        let sent = service::open_books(self.app.ports.clone()).await.expect("books opened");
        self.settle().await;
        sent
    }

    pub fn creds(&self) -> Creds {
        Creds {
            id: self.client_id.clone(),
            key: self.api_key.clone(),
        }
    }

    pub fn store(&self) -> &dyn Store {
        self.app.store.as_ref()
    }

    /// Sends a request through the kernel, as the adapters do, then hands its webhooks over.
    pub async fn raw(&self, method: Method, uri: &str, headers: &[(&str, &str)], body: Result<Bytes, usize>) -> Resp {
        self.raw_from(method, uri, headers, body, IpAddr::V4(Ipv4Addr::LOCALHOST))
            .await
    }

    pub async fn raw_from(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Result<Bytes, usize>,
        ip: IpAddr,
    ) -> Resp {
        let (path, query) = match uri.split_once('?') {
            Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
            None => (uri.to_owned(), None),
        };
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        let app = self.function_for(&method, &path).clone();
        let label = app
            .routes
            .label(&method, path.strip_prefix("/tapiv3/index.php").unwrap_or(&path));
        let (handled, cost) = shared::store::counting(app.handle(RawRequest {
            method,
            path,
            query,
            headers: map,
            body,
            ip,
        }))
        .await;
        let (head, bytes) = handled.response.into_parts();
        app.dispatch(handled.events).await;
        let json = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("JSON body")
        };
        // A replayed answer (an Idempotency-Key used again) is not the operation's cost.
        if let Some(label) = label.filter(|_| !head.headers.contains_key("idempotent-replayed")) {
            self.log_cost(&label, head.status.as_u16(), &json, cost);
        }
        Resp {
            status: head.status.as_u16(),
            headers: head.headers,
            json,
        }
    }

    /// Appends a request's store cost to the file `IPS_COSTS_LOG` names (set by
    /// `tests/run.sh` for the whole suite; `tests/costs.py` turns it into `docs/costs.md`).
    fn log_cost(&self, label: &str, http: u16, json: &Value, cost: shared::store::Cost) {
        use std::io::Write;
        let Some(path) = std::env::var_os("IPS_COSTS_LOG").filter(|_| self.log_costs) else {
            return;
        };
        let line = serde_json::json!({
            "op": label,
            "backend": format!("{:?}", self.backend),
            "ok": (200..300).contains(&http) && json["statusCode"] == "101",
            "reads": cost.reads,
            "writes": cost.writes,
        });
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("the costs log");
        // One write per line, so lines from parallel tests never interleave.
        file.write_all(format!("{line}\n").as_bytes()).expect("a cost line");
    }

    /// Leaves this app's requests out of the cost log: a test that calls operations in
    /// whatever state others left, to explore them, says nothing of what they cost.
    pub fn without_cost_log(mut self) -> TestApp {
        self.log_costs = false;
        self
    }

    /// A form-encoded method-style call with the bearer header of `creds`.
    pub async fn form_as(&self, creds: &Creds, method: Method, op: &str, pairs: &[(&str, &str)]) -> Resp {
        let body = serde_urlencoded::to_string(pairs).unwrap();
        let auth = creds.bearer();
        let headers = [
            ("authorization", auth.as_str()),
            ("content-type", "application/x-www-form-urlencoded"),
        ];
        self.raw(method, &format!("/v3/{op}"), &headers, Ok(Bytes::from(body)))
            .await
    }

    /// A form-encoded `PUT /v3/<op>` as the sandbox client.
    pub async fn put(&self, op: &str, pairs: &[(&str, &str)]) -> Resp {
        self.form_as(&self.creds(), Method::PUT, op, pairs).await
    }

    /// A form-encoded `POST /v3/<op>` as the sandbox client.
    pub async fn post(&self, op: &str, pairs: &[(&str, &str)]) -> Resp {
        self.form_as(&self.creds(), Method::POST, op, pairs).await
    }

    /// A multipart `POST` of text fields and files (`(field, file name, bytes)`).
    pub async fn multipart(&self, op: &str, fields: &[(&str, &str)], files: &[(&str, &str, &[u8])]) -> Resp {
        self.multipart_as(&self.creds(), op, fields, files).await
    }

    /// [`TestApp::multipart`] with the bearer header of `creds`.
    pub async fn multipart_as(
        &self,
        creds: &Creds,
        op: &str,
        fields: &[(&str, &str)],
        files: &[(&str, &str, &[u8])],
    ) -> Resp {
        let (content_type, body) = multipart_body(fields, files);
        let auth = creds.bearer();
        self.raw(
            Method::POST,
            &format!("/v3/{op}"),
            &[("content-type", &content_type), ("authorization", &auth)],
            Ok(body),
        )
        .await
    }

    /// Reads a document URL the service handed out: the local blob store's as the local API
    /// serves it, S3's (moto) over HTTP. Answers the status and the bytes.
    pub async fn fetch(&self, url: &str) -> (u16, Bytes) {
        if let Some(rest) = url.strip_prefix(BLOB_BASE) {
            let (path, query) = rest.split_once('?').map_or((rest, None), |(p, q)| (p, Some(q)));
            let blobs = self.app.blobs.as_ref().expect("a blob store");
            return match blobs.serve(path, query).await.expect("a local document URL") {
                Served::Found { mut file, .. } => {
                    let mut bytes = Vec::new();
                    file.read_to_end(&mut bytes).await.expect("the document reads");
                    (200, bytes.into())
                }
                refused => {
                    let (status, text) = refused.refusal().expect("a refusal");
                    (status, Bytes::from_static(text.as_bytes()))
                }
            };
        }
        let r = reqwest::get(url).await.expect("document URL answers");
        (r.status().as_u16(), r.bytes().await.expect("document body"))
    }

    /// Sends `bytes` with one `PUT` to an upload URL, as a client does: the local store's
    /// through the handler the local API runs, an S3 presigned one over HTTP. The status.
    pub async fn put_url(&self, url: &str, bytes: Vec<u8>) -> u16 {
        if let Some(rest) = url.strip_prefix(BLOB_BASE) {
            let (path, query) = rest.split_once('?').map_or((rest, None), |(p, q)| (p, Some(q)));
            let blobs = self.app.blobs.as_ref().expect("a blob store");
            let body = futures_util::stream::once(async move { Ok(Bytes::from(bytes)) });
            let received = blobs.receive(path, query, Box::pin(body)).await;
            return received.expect("a local upload URL").status().0;
        }
        let r = reqwest::Client::new()
            .put(url)
            .body(bytes)
            .send()
            .await
            .expect("upload URL answers");
        r.status().as_u16()
    }

    /// A file sent the way large documents are (`POST /v3/documents/uploads`, then one `PUT`
    /// to the URL it answers): the `uploadId` that stands for it.
    pub async fn upload_file(&self, file_name: &str, bytes: Vec<u8>) -> String {
        let body = serde_json::json!({ "fileName": file_name });
        let r = self
            .json_as(&self.creds(), Method::POST, "/v3/documents/uploads", &body)
            .await;
        assert_eq!((r.status, r.code()), (200, "101"), "{:?}", r.json);
        let slot = &r.json["uploadDetails"];
        assert_eq!(
            self.put_url(slot["uploadUrl"].as_str().expect("uploadUrl"), bytes)
                .await,
            200
        );
        slot["uploadId"].as_str().expect("uploadId").to_owned()
    }

    /// A `GET` with the bearer header of `creds`.
    pub async fn get_as(&self, creds: &Creds, uri: &str) -> Resp {
        let auth = creds.bearer();
        self.raw(Method::GET, uri, &[("authorization", auth.as_str())], Ok(Bytes::new()))
            .await
    }

    pub async fn get(&self, uri: &str) -> Resp {
        self.get_as(&self.creds(), uri).await
    }

    /// A JSON request with the bearer header of `creds`.
    pub async fn json_as(&self, creds: &Creds, method: Method, uri: &str, body: &Value) -> Resp {
        let auth = creds.bearer();
        let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
        self.raw(method, uri, &headers, Ok(Bytes::from(body.to_string()))).await
    }

    /// An operator API call.
    pub async fn operator(&self, method: Method, path: &str, body: Value) -> Resp {
        let auth = format!("Bearer {OPERATOR_TOKEN}");
        let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
        self.raw(method, path, &headers, Ok(Bytes::from(body.to_string())))
            .await
    }

    /// A new client made through the operator API.
    pub async fn new_client(&self, spec: Value) -> Creds {
        let r = self.operator(Method::POST, "/operator/clients", spec).await;
        assert_eq!(r.status, 201, "{:?}", r.json);
        Creds {
            id: r.json["clientId"].as_str().unwrap().into(),
            key: r.json["apiKey"].as_str().unwrap().into(),
        }
    }

    /// The same service, its requests made as a new client with every method and scope: for
    /// tests that narrow their client, which the sandbox client never is (CONTRACT).
    pub async fn as_new_client(mut self) -> TestApp {
        let c = self.new_client(serde_json::json!({"scopes": ["*"]})).await;
        (self.client_id, self.api_key) = (c.id, c.key);
        self
    }

    /// Registers webhook URLs for a method of the test's client.
    pub async fn register_webhook(&self, method: &str, urls: &[&str]) {
        let path = format!("/operator/clients/{}/webhooks/{method}", self.client_id);
        let r = self
            .operator(Method::PUT, &path, serde_json::json!({ "urls": urls }))
            .await;
        assert_eq!(r.status, 200, "{:?}", r.json);
    }
}

/// A webhook request as a listener received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
}

impl Received {
    /// The form body's pairs, in order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        serde_urlencoded::from_str(&self.body).expect("form body")
    }
}

/// A record's string fields as webhook pairs, in order (what a webhook of that record
/// carries).
pub fn record_pairs(v: &Value) -> Vec<(String, String)> {
    v.as_object()
        .expect("a record")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("a string field").to_owned()))
        .collect()
}

/// A real HTTP listener on loopback that records every request it gets.
pub struct Listener {
    pub url: String,
    rx: mpsc::UnboundedReceiver<Received>,
    stalled: Arc<AtomicBool>,
}

impl Listener {
    /// Starts a listener answering `status` to everything.
    pub async fn start(status: u16) -> Listener {
        let tcp = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let url = format!("http://{}/hook", tcp.local_addr().unwrap());
        let (tx, rx) = mpsc::unbounded_channel();
        let stalled = Arc::new(AtomicBool::new(false));
        let stalling = stalled.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = tcp.accept().await else {
                    return;
                };
                if stalling.load(Ordering::SeqCst) {
                    // Holds the connection without reading the request: nothing arrives.
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        drop(stream);
                    });
                    continue;
                }
                let tx = tx.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let tx = tx.clone();
                        async move {
                            let (parts, body) = req.into_parts();
                            let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                            let _ = tx.send(Received {
                                method: parts.method,
                                path: parts.uri.path().to_owned(),
                                headers: parts.headers,
                                body: String::from_utf8_lossy(&bytes).into_owned(),
                            });
                            let mut resp = hyper::Response::new(Full::new(Bytes::from_static(b"ok")));
                            *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                            Ok::<_, std::convert::Infallible>(resp)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, svc)
                        .await;
                });
            }
        });
        Listener { url, rx, stalled }
    }

    /// While stalled, new connections are accepted and never read (a receiver that hangs).
    pub fn set_stalled(&self, on: bool) {
        self.stalled.store(on, Ordering::SeqCst);
    }

    /// The next request, waiting up to `secs`.
    pub async fn next(&mut self, secs: u64) -> Option<Received> {
        tokio::time::timeout(Duration::from_secs(secs), self.rx.recv())
            .await
            .ok()
            .flatten()
    }
}
