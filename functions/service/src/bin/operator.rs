//! The operator function: `/operator/...` behind API Gateway's IAM authorization
//! (`service::OPERATOR`). Client keys never reach it: no client route points here.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    shared::lambda::serve(service::OPERATOR).await
}
