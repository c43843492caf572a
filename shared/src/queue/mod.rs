//! The queue port: webhook deliveries and batch work travel through it. SQS in AWS, an
//! in-process channel locally.

pub mod embedded;
pub mod sequencer;
pub mod sqs;

use std::time::Duration;

use async_trait::async_trait;

/// A received message; `receipt` acknowledges it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub id: String,
    pub receipt: String,
    pub body: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QueueError {
    #[error("queue backend: {0}")]
    Backend(String),
}

#[async_trait]
pub trait Queue: Send + Sync {
    /// Enqueues messages (any number; adapters batch as their backend needs).
    async fn send(&self, bodies: Vec<String>) -> Result<(), QueueError>;
    /// Waits up to `wait` for at most `max` messages (fewer, or none, on timeout).
    async fn receive(&self, max: u32, wait: Duration) -> Result<Vec<Message>, QueueError>;
    /// Removes a received message for good.
    async fn ack(&self, receipt: &str) -> Result<(), QueueError>;
    /// Whether a sent message survives the process (SQS) or lives in its memory (the local
    /// channel). Decides when a webhook's outbox entry may go: after the hand-over, or only
    /// after the delivery attempt.
    fn durable(&self) -> bool;
}
