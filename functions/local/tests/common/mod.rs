//! Starting the local API binary for the end-to-end tests.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

pub const KEY: &str = "local-test-key";
pub const OPERATOR: &str = "local-test-operator";

pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub async fn start(env: &[(&str, String)]) -> Server {
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_local-api"));
    cmd.env("IPS_BIND", format!("127.0.0.1:{port}"))
        .env("IPS_DEV_CLIENT_ID", "local-test")
        .env("IPS_DEV_API_KEY", KEY)
        .env("IPS_OPERATOR_TOKEN", OPERATOR)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let server = Server {
        child: cmd.spawn().expect("local-api starts"),
        base: format!("http://127.0.0.1:{port}"),
    };
    let http = reqwest::Client::new();
    for _ in 0..300 {
        if http.get(format!("{}/v3/ping", server.base)).send().await.is_ok() {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("local-api did not answer within 30 s");
}

/// The sandbox client's calls to a running local API.
pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
}

impl Api {
    pub fn new(base: &str) -> Api {
        Api {
            base: base.to_owned(),
            http: reqwest::Client::new(),
        }
    }

    /// A request to `path` with the sandbox client's credentials.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("Bearer local-test:{KEY}"))
    }

    /// A `GET` answered with JSON.
    pub async fn get(&self, path: &str) -> Value {
        answer(self.request(reqwest::Method::GET, path)).await
    }

    /// An operation called with form parameters, which must answer `101`: its JSON body.
    pub async fn call(&self, method: reqwest::Method, op: &str, form: &[(&str, &str)]) -> Value {
        let body = answer(self.request(method, &format!("/v3/{op}")).form(form)).await;
        assert_eq!(body["statusCode"], "101", "{op}: {body}");
        body
    }

    /// Registers `url` for the sandbox client's `method` webhooks (the operator API).
    pub async fn register(&self, method: &str, url: &str) {
        let reg = self
            .http
            .put(format!("{}/operator/clients/local-test/webhooks/{method}", self.base))
            .header("authorization", format!("Bearer {OPERATOR}"))
            .json(&serde_json::json!({"urls": [url]}))
            .send()
            .await
            .unwrap();
        assert_eq!(reg.status(), 200);
    }
}

/// The JSON body of the answer to `request`.
pub async fn answer(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// The first string held under `key` anywhere in `v`.
pub fn find(v: &Value, key: &str) -> Option<String> {
    match v {
        Value::Object(m) => m
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| m.values().find_map(|v| find(v, key))),
        Value::Array(a) => a.iter().find_map(|v| find(v, key)),
        _ => None,
    }
}
