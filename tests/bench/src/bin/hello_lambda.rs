//! The Lambda reference: a lambda_http function answering a small JSON body, for cold start
//! and binary size. On the current-thread runtime, as the functions are, so that the ratio
//! measures what a function adds to it.

use lambda_http::{run, service_fn, Body, Error, Request, Response};

async fn hello(_: Request) -> Result<Response<Body>, Error> {
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(r#"{"statusCode":"103","statusDesc":"hello"}"#))?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    run(service_fn(hello)).await
}
