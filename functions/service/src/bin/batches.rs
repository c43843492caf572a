//! The batches function: EventBridge schedules enqueue each batch's due items on business
//! days, and this function processes them from the batch queue (`service::BATCHES`).

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    shared::logging::init(true);
    shared::lambda::serve_batches(&service::BATCHES).await
}
