//! The sequencer port: work on a security's order book, applied one message at a time per
//! security and in the order sent (CONTRACT, "ATS"). In AWS an SQS FIFO queue whose message
//! group is the security, consumed by one worker; locally an in-process lane per security.
//! The worker is idempotent, so a message delivered twice changes nothing the second time.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, Notify};

use super::QueueError;
use crate::aws::LazyClient;
use crate::error::ApiError;

/// Work for one security's book: place an order on it, or (without one) uncross it at the
/// market's open.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BookMessage {
    pub client_id: String,
    pub security_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
}

impl BookMessage {
    /// The serialization group: one book.
    pub fn group(&self) -> String {
        format!("{}#{}", self.client_id, self.security_id)
    }
}

pub type BookFuture = Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send>>;
/// Applies one message to its book, with the process's ports (`P`: the port layer's
/// `Ports`, named only there so that this port does not import the layer that holds it).
pub type BookWork<P> = fn(Arc<P>, BookMessage) -> BookFuture;

#[async_trait]
pub trait Sequencer<P: Send + Sync + 'static>: Send + Sync {
    /// Hands `msg` to its book's worker, behind every message sent to that book before
    /// (`ports`: what a worker in this process applies it with).
    async fn send(&self, ports: &Arc<P>, msg: BookMessage) -> Result<(), QueueError>;
}

/// How often the local lanes retry a message that failed (a store error), as SQS would
/// redeliver it.
const LOCAL_ATTEMPTS: usize = 5;

type Lane<P> = mpsc::UnboundedSender<(Arc<P>, BookMessage)>;

/// The local API's sequencer: one task per book applies its messages in order. A message
/// already waiting in its lane is not queued twice: a copy would find nothing left to do,
/// and on a slow store the copies the stranded-order sweep sends would pile up faster than
/// the book drains them.
pub struct LocalSequencer<P> {
    work: BookWork<P>,
    lanes: Mutex<HashMap<String, Lane<P>>>,
    waiting: Arc<Mutex<HashSet<BookMessage>>>,
    busy: Arc<AtomicUsize>,
    idle: Arc<Notify>,
}

impl<P: Send + Sync + 'static> LocalSequencer<P> {
    pub fn new(work: BookWork<P>) -> Self {
        LocalSequencer {
            work,
            lanes: Mutex::new(HashMap::new()),
            waiting: Arc::default(),
            busy: Arc::new(AtomicUsize::new(0)),
            idle: Arc::new(Notify::new()),
        }
    }

    /// Waits until every message sent so far has been applied.
    pub async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.busy.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }

    fn lane(&self, group: String) -> Lane<P> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        lanes
            .entry(group)
            .or_insert_with(|| {
                let (tx, mut rx) = mpsc::unbounded_channel::<(Arc<P>, BookMessage)>();
                let (work, busy, idle) = (self.work, self.busy.clone(), self.idle.clone());
                let waiting = self.waiting.clone();
                tokio::spawn(async move {
                    while let Some((ports, msg)) = rx.recv().await {
                        // Taken: a message sent from now on is queued again behind it.
                        waiting.lock().unwrap_or_else(|e| e.into_inner()).remove(&msg);
                        for attempt in 1..=LOCAL_ATTEMPTS {
                            match work(ports.clone(), msg.clone()).await {
                                Ok(()) => break,
                                Err(e) => {
                                    tracing::error!(error = %e, book = %msg.group(), attempt, "book message failed")
                                }
                            }
                        }
                        busy.fetch_sub(1, Ordering::SeqCst);
                        idle.notify_waiters();
                    }
                });
                tx
            })
            .clone()
    }
}

#[async_trait]
impl<P: Send + Sync + 'static> Sequencer<P> for LocalSequencer<P> {
    async fn send(&self, ports: &Arc<P>, msg: BookMessage) -> Result<(), QueueError> {
        if !self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(msg.clone())
        {
            return Ok(());
        }
        self.busy.fetch_add(1, Ordering::SeqCst);
        self.lane(msg.group())
            .send((ports.clone(), msg))
            .map_err(|_| QueueError::Backend("book lane closed".into()))
    }
}

/// The sequencer on an SQS FIFO queue: the message group is the book, and each message is
/// distinct (the worker, not SQS's deduplication, makes a repeat harmless).
pub struct SqsSequencer {
    client: LazyClient<aws_sdk_sqs::Client>,
    queue_url: String,
}

impl SqsSequencer {
    pub fn new(client: impl Into<LazyClient<aws_sdk_sqs::Client>>, queue_url: String) -> Self {
        SqsSequencer {
            client: client.into(),
            queue_url,
        }
    }
}

#[async_trait]
impl<P: Send + Sync + 'static> Sequencer<P> for SqsSequencer {
    async fn send(&self, _ports: &Arc<P>, msg: BookMessage) -> Result<(), QueueError> {
        let body = serde_json::to_string(&msg).map_err(|e| QueueError::Backend(e.to_string()))?;
        self.client
            .get()
            .send_message()
            .queue_url(&self.queue_url)
            .message_group_id(msg.group())
            .message_deduplication_id(crate::ids::unique())
            .message_body(body)
            .send()
            .await
            .map_err(|e| QueueError::Backend(aws_sdk_sqs::error::DisplayErrorContext(e).to_string()))?;
        Ok(())
    }
}

/// Applies the order queue's messages (`(id, body)`) in the order SQS FIFO delivered them:
/// from the first that fails (or does not parse) on, every message is answered failed, so
/// that SQS redelivers them still in order (the worker makes a repeat harmless). Answers
/// the failed messages' IDs.
pub async fn apply_in_order<P: Send + Sync + 'static>(
    ports: &Arc<P>,
    work: BookWork<P>,
    messages: Vec<(String, Option<String>)>,
) -> Vec<String> {
    let mut failed = Vec::new();
    for (id, body) in messages {
        if failed.is_empty() {
            match body.as_deref().map(serde_json::from_str::<BookMessage>) {
                Some(Ok(msg)) => match work(ports.clone(), msg).await {
                    Ok(()) => continue,
                    Err(e) => tracing::warn!(error = %e, message = %id, "book message failed; SQS will redeliver it"),
                },
                _ => tracing::error!(message = %id, "book message that does not parse"),
            }
        }
        failed.push(id);
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(_: Arc<()>, msg: BookMessage) -> BookFuture {
        Box::pin(async move {
            match msg.order_id.as_deref() {
                Some("bad") => Err(ApiError::internal("the store failed")),
                _ => Ok(()),
            }
        })
    }

    /// A message of book `c#s` for `order`.
    fn book_message(order: &str) -> BookMessage {
        BookMessage {
            client_id: "c".into(),
            security_id: "s".into(),
            order_id: Some(order.into()),
        }
    }

    fn message(id: &str, order: &str) -> (String, Option<String>) {
        (id.into(), serde_json::to_string(&book_message(order)).ok())
    }

    /// Notes the order of each message applied, in `seen`.
    fn note(seen: &Mutex<Vec<String>>, msg: BookMessage) {
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(msg.order_id.unwrap_or_default());
    }

    #[tokio::test]
    async fn from_the_first_failure_on_every_message_is_given_back_in_order() {
        let batch = vec![message("1", "a"), message("2", "bad"), message("3", "b")];
        assert_eq!(apply_in_order(&Arc::new(()), work, batch).await, ["2", "3"]);
        let unreadable = vec![message("1", "a"), ("2".into(), Some("{".into())), message("3", "b")];
        assert_eq!(apply_in_order(&Arc::new(()), work, unreadable).await, ["2", "3"]);
        assert!(apply_in_order(&Arc::new(()), work, vec![message("1", "a")])
            .await
            .is_empty());
    }

    #[tokio::test]
    async fn local_lanes_apply_each_books_messages_in_order() {
        static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
        fn record(_: Arc<()>, msg: BookMessage) -> BookFuture {
            Box::pin(async move {
                note(&SEEN, msg);
                Ok(())
            })
        }
        let lanes = LocalSequencer::new(record as BookWork<()>);
        let ports = Arc::new(());
        for n in 0..50 {
            lanes.send(&ports, book_message(&n.to_string())).await.expect("sent");
        }
        lanes.idle().await;
        let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert_eq!(seen, (0..50).map(|n| n.to_string()).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_message_already_waiting_in_its_lane_is_not_queued_twice() {
        static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
        fn slow(_: Arc<()>, msg: BookMessage) -> BookFuture {
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                note(&SEEN, msg);
                Ok(())
            })
        }
        let lanes = LocalSequencer::new(slow as BookWork<()>);
        let ports = Arc::new(());
        // "a" is taken at once; the copies of "b" sent while it waits behind "a" are one.
        for order in ["a", "b", "b", "b", "c", "b"] {
            lanes.send(&ports, book_message(order)).await.expect("sent");
        }
        lanes.idle().await;
        // Taken from its lane, a message may be queued again.
        lanes.send(&ports, book_message("b")).await.expect("sent");
        lanes.idle().await;
        let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert_eq!(seen, ["a", "b", "c", "b"]);
    }
}
