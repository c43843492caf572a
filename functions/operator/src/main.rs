//! The operator function: `/operator/...` behind API Gateway's IAM authorization, through the
//! shared kernel. Client keys never reach it: no client route points here.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    let app = shared::lambda::operator_app().await?;
    lambda_http::run(lambda_http::service_fn(move |req| {
        shared::lambda::handle_operator(app.clone(), req)
    }))
    .await
}
