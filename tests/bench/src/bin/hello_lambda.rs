//! The Lambda reference: a lambda_http function answering a small JSON body, for cold start
//! and binary size.

use lambda_http::{run, service_fn, Body, Error, Request, Response};

async fn hello(_: Request) -> Result<Response<Body>, Error> {
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(r#"{"statusCode":"103","statusDesc":"hello"}"#))?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    run(service_fn(hello)).await
}
