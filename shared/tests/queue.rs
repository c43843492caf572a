//! The queue port's contract: every case runs against the in-process queue and against SQS
//! (moto's server in development and CI, reached through `AWS_ENDPOINT_URL`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shared::queue::embedded::EmbeddedQueue;
use shared::queue::sqs::SqsQueue;
use shared::queue::{Message, Queue};

type Shared = Arc<dyn Queue>;

async fn embedded_queue() -> Shared {
    Arc::new(EmbeddedQueue::default())
}

fn require_endpoint() {
    if std::env::var("AWS_ENDPOINT_URL").map_or(true, |v| v.is_empty()) {
        panic!(
            "AWS_ENDPOINT_URL is not set: the SQS variants of the queue tests need an SQS \
             endpoint. Run the tests through `tests/run.sh` (it starts moto's \
             server and sets the environment), or start `moto_server -p 5000` and set \
             AWS_ENDPOINT_URL=http://127.0.0.1:5000 AWS_REGION=us-east-1 \
             AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_EC2_METADATA_DISABLED=true"
        );
    }
}

async fn sqs_client() -> aws_sdk_sqs::Client {
    require_endpoint();
    aws_sdk_sqs::Client::new(&shared::aws::sdk_config().expect("the AWS environment"))
}

/// An SQS queue of its own.
async fn sqs_queue() -> Shared {
    let name = format!("q-{}", uuid::Uuid::new_v4());
    match SqsQueue::ensure(sqs_client().await, &name).await {
        Ok(queue) => Arc::new(queue),
        Err(e) => panic!("creating queue {name}: {e}"),
    }
}

/// Writes each case once as an `async fn(Shared)` and runs it on both adapters:
/// `case::embedded` and `case::sqs`.
macro_rules! contract {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn embedded() {
                super::$case(super::embedded_queue().await).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqs() {
                super::$case(super::sqs_queue().await).await
            }
        }
    )*};
}

contract!(
    sent_messages_are_received_and_gone_once_acknowledged,
    large_bodies_travel_in_several_batches,
    receive_returns_at_most_the_asked_number,
    receive_on_an_empty_queue_waits_then_returns_nothing,
);

async fn receive(queue: &Shared, max: u32, wait: Duration) -> Vec<Message> {
    match queue.receive(max, wait).await {
        Ok(messages) => messages,
        Err(e) => panic!("receive failed: {e}"),
    }
}

/// Receives until `count` messages arrived (or 30 receives went by), acknowledging each.
async fn drain(queue: &Shared, count: usize) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for _ in 0..30 {
        if out.len() >= count {
            break;
        }
        let batch = receive(queue, 10, Duration::from_secs(1)).await;
        assert!(batch.len() <= 10, "{} messages in one receive", batch.len());
        for m in batch {
            if let Err(e) = queue.ack(&m.receipt).await {
                panic!("ack failed: {e}");
            }
            out.push(m);
        }
    }
    out
}

async fn sent_messages_are_received_and_gone_once_acknowledged(queue: Shared) {
    let bodies: Vec<String> = (0..25).map(|i| format!("{{\"n\":{i},\"text\":\"é\"}}")).collect();
    if let Err(e) = queue.send(bodies.clone()).await {
        panic!("send failed: {e}");
    }
    let got = drain(&queue, bodies.len()).await;
    let mut received: Vec<String> = got.iter().map(|m| m.body.clone()).collect();
    received.sort();
    let mut expected = bodies;
    expected.sort();
    assert_eq!(received, expected);
    let ids: HashSet<&str> = got.iter().map(|m| m.id.as_str()).collect();
    let receipts: HashSet<&str> = got.iter().map(|m| m.receipt.as_str()).collect();
    assert_eq!((ids.len(), receipts.len()), (25, 25), "ids and receipts are distinct");
    assert!(receive(&queue, 10, Duration::from_millis(600)).await.is_empty());
    // Sending nothing is no error.
    assert_eq!(queue.send(Vec::new()).await, Ok(()));
}

async fn large_bodies_travel_in_several_batches(queue: Shared) {
    // 10 bodies of 60 KiB: one batch by count, three by SQS's 256 KiB batch limit.
    let bodies: Vec<String> = (0..10).map(|i| format!("{i:02}{}", "x".repeat(60 * 1024))).collect();
    if let Err(e) = queue.send(bodies.clone()).await {
        panic!("send failed: {e}");
    }
    let mut received: Vec<String> = drain(&queue, 10).await.into_iter().map(|m| m.body).collect();
    received.sort();
    assert_eq!(received, bodies);
}

async fn receive_returns_at_most_the_asked_number(queue: Shared) {
    let bodies: Vec<String> = (0..5).map(|i| i.to_string()).collect();
    if let Err(e) = queue.send(bodies).await {
        panic!("send failed: {e}");
    }
    let first = receive(&queue, 2, Duration::from_secs(1)).await;
    assert!((1..=2).contains(&first.len()), "{} messages", first.len());
    for m in &first {
        assert_eq!(queue.ack(&m.receipt).await, Ok(()));
    }
    let rest = drain(&queue, 5 - first.len()).await;
    assert_eq!(first.len() + rest.len(), 5);
}

async fn receive_on_an_empty_queue_waits_then_returns_nothing(queue: Shared) {
    let started = Instant::now();
    assert!(receive(&queue, 10, Duration::from_secs(1)).await.is_empty());
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "returned after {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn sqs_ensure_finds_the_queue_it_created() {
    let client = sqs_client().await;
    let name = format!("q-{}", uuid::Uuid::new_v4());
    let first = SqsQueue::ensure(client.clone(), &name).await;
    let second = SqsQueue::ensure(client, &name).await;
    match (first, second) {
        (Ok(a), Ok(b)) => assert_eq!(a.url(), b.url()),
        (a, b) => panic!("ensure failed: {:?} {:?}", a.err(), b.err()),
    }
}
