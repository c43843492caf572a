//! The legacy-prefix function: `/tapiv3/index.php/v3/<operation>`, which existing clients of
//! the incumbent call for every method-style operation (`service::LEGACY`), and, since it
//! links every route, the OpenAPI document at `/openapi.json`.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    shared::lambda::serve_documented(service::LEGACY, service::openapi).await
}
