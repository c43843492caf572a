//! Starting the local API binary for the end-to-end tests.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

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
