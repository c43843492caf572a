//! The book worker: the order queue's messages (SQS FIFO, one message group per security)
//! applied in order, and the per-minute tick that uncrosses books at their market's open.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), lambda_runtime::Error> {
    shared::logging::init(true);
    shared::lambda::serve_book(service::BOOK_WORK, |ports| Box::pin(service::open_books(ports))).await
}
