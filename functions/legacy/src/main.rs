//! The legacy-prefix function: `/tapiv3/index.php/v3/<operation>`, which existing clients of
//! the incumbent call for every method-style operation. API Gateway cannot route on a path
//! parameter's value, and a prefixed route per operation would double the API's routes, so
//! this one function links every group's routes and serves that prefix; `/v3/...` traffic
//! still reaches each group's own function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::logging::init(true);
    let app = shared::lambda::app_with_documents(legacy_routes()).await?;
    lambda_http::run(lambda_http::service_fn(move |req| {
        shared::lambda::handle(app.clone(), req)
    }))
    .await
}

/// Every group's routes.
fn legacy_routes() -> shared::Routes {
    investors::routes().merge(offerings::routes()).merge(trades::routes())
}
