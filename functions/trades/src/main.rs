//! The trades function: API Gateway events through the shared kernel.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    let app = shared::lambda::app_with_documents(trades::routes()).await?;
    lambda_http::run(lambda_http::service_fn(move |req| {
        shared::lambda::handle(app.clone(), req)
    }))
    .await
}
