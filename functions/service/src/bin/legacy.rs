//! The legacy-prefix function: `/tapiv3/index.php/v3/<operation>`, which existing clients of
//! the incumbent call for every method-style operation (`service::LEGACY`).

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    shared::lambda::serve(service::LEGACY).await
}
