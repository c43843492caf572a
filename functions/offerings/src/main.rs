//! The offerings function: API Gateway events through the shared kernel.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    shared::lambda::serve(offerings::FUNCTION).await
}
