//! The HTTP reference: bare hyper on tokio's multi-threaded runtime, answering every request
//! with a fixed envelope after reading its body, on `BENCH_BIND`.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

const BODY: &[u8] = br#"{"statusCode":"101","statusDesc":"Ok","status":"ok"}"#;

async fn answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    // Read and drop the body, as the API does before answering.
    let _ = req.into_body().collect().await;
    let mut resp = Response::new(Full::new(Bytes::from_static(BODY)));
    resp.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::var("BENCH_BIND").unwrap_or_else(|_| "127.0.0.1:8090".into());
    let listener = TcpListener::bind(&bind).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(answer))
                .await;
        });
    }
}
