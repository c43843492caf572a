//! The SQS adapter: one standard queue, addressed by its URL.

use std::error::Error as StdError;
use std::fmt::Debug;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::error::{DisplayErrorContext, SdkError};
use aws_sdk_sqs::operation::get_queue_url::GetQueueUrlError;
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use aws_sdk_sqs::Client;

use super::{Message, Queue, QueueError};
use crate::aws::LazyClient;

/// Most messages one `SendMessageBatch` or `ReceiveMessage` carries (SQS's limit).
const MAX_BATCH: usize = 10;
/// Most bytes of message bodies one `SendMessageBatch` carries (SQS's classic limit of
/// 256 KiB for a batch's total payload).
const MAX_BATCH_BYTES: usize = 256 * 1024;
/// Longest long poll SQS allows.
const MAX_WAIT_SECONDS: u64 = 20;

/// The [`Queue`] on an SQS standard queue.
///
/// `send` batches bodies into `SendMessageBatch` requests (at most 10 messages and 256 KiB
/// each); `receive` long-polls with `ReceiveMessage` (the wait rounded to whole seconds,
/// at most 20; at most 10 messages); `ack` deletes the message. A message received and not
/// acknowledged comes back after the queue's visibility timeout.
pub struct SqsQueue {
    client: LazyClient<Client>,
    queue_url: String,
}

impl SqsQueue {
    /// The queue at `queue_url` through `client` (built from [`crate::aws::sdk_config`], now
    /// or on first use).
    pub fn new(client: impl Into<LazyClient<Client>>, queue_url: String) -> Self {
        SqsQueue {
            client: client.into(),
            queue_url,
        }
    }

    /// The queue named `name`, created (with default attributes) when it is missing. For the
    /// local API and tests: in AWS the SAM template owns the queues.
    pub async fn ensure(client: Client, name: &str) -> Result<SqsQueue, QueueError> {
        let url = match client.get_queue_url().queue_name(name).send().await {
            Ok(out) => out.queue_url,
            Err(e) if matches!(e.as_service_error(), Some(GetQueueUrlError::QueueDoesNotExist(_))) => {
                client
                    .create_queue()
                    .queue_name(name)
                    .send()
                    .await
                    .map_err(sdk_backend)?
                    .queue_url
            }
            Err(e) => return Err(sdk_backend(e)),
        };
        let url = url.ok_or_else(|| QueueError::Backend(format!("no URL for queue {name}")))?;
        Ok(SqsQueue::new(client, url))
    }

    /// The queue's URL.
    pub fn url(&self) -> &str {
        &self.queue_url
    }

    async fn send_batch(&self, bodies: Vec<String>) -> Result<(), QueueError> {
        let entries = bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| {
                SendMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .message_body(body)
                    .build()
                    .map_err(|e| QueueError::Backend(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let out = self
            .client
            .get()
            .send_message_batch()
            .queue_url(&self.queue_url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(sdk_backend)?;
        if out.failed.is_empty() {
            return Ok(());
        }
        let failures: Vec<String> = out
            .failed
            .iter()
            .map(|f| {
                format!(
                    "entry {}: {} {}",
                    f.id,
                    f.code,
                    f.message.as_deref().unwrap_or_default()
                )
            })
            .collect();
        Err(QueueError::Backend(format!(
            "{} of {} messages not sent: {}",
            out.failed.len(),
            out.failed.len() + out.successful.len(),
            failures.join("; ")
        )))
    }
}

/// Splits bodies into batches SQS accepts: at most [`MAX_BATCH`] messages and
/// [`MAX_BATCH_BYTES`] of bodies each (a larger body travels alone).
fn batches(bodies: Vec<String>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut bytes = 0;
    for body in bodies {
        let full = out
            .last()
            .is_none_or(|b| b.len() >= MAX_BATCH || bytes + body.len() > MAX_BATCH_BYTES);
        if full {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += body.len();
        if let Some(batch) = out.last_mut() {
            batch.push(body);
        }
    }
    out
}

/// A wait in whole seconds as SQS takes it: rounded to the nearest second, at most 20.
fn wait_seconds(wait: Duration) -> i32 {
    let rounded = (wait.as_millis() + 500) / 1000;
    i32::try_from(rounded.min(u128::from(MAX_WAIT_SECONDS))).unwrap_or(0)
}

fn sdk_backend<E, R>(e: SdkError<E, R>) -> QueueError
where
    E: StdError + 'static,
    R: Debug,
{
    QueueError::Backend(DisplayErrorContext(&e).to_string())
}

#[async_trait]
impl Queue for SqsQueue {
    async fn send(&self, bodies: Vec<String>) -> Result<(), QueueError> {
        for batch in batches(bodies) {
            self.send_batch(batch).await?;
        }
        Ok(())
    }

    async fn receive(&self, max: u32, wait: Duration) -> Result<Vec<Message>, QueueError> {
        let max = i32::try_from(max.clamp(1, MAX_BATCH as u32)).unwrap_or(1);
        let out = self
            .client
            .get()
            .receive_message()
            .queue_url(&self.queue_url)
            .max_number_of_messages(max)
            .wait_time_seconds(wait_seconds(wait))
            .send()
            .await
            .map_err(sdk_backend)?;
        out.messages
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                let receipt = m
                    .receipt_handle
                    .ok_or_else(|| QueueError::Backend("received a message without a receipt handle".into()))?;
                Ok(Message {
                    id: m.message_id.unwrap_or_default(),
                    receipt,
                    body: m.body.unwrap_or_default(),
                })
            })
            .collect()
    }

    fn durable(&self) -> bool {
        true
    }

    async fn ack(&self, receipt: &str) -> Result<(), QueueError> {
        self.client
            .get()
            .delete_message()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt)
            .send()
            .await
            .map_err(sdk_backend)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_at_most_ten_messages_and_256_kib() {
        let small: Vec<String> = (0..23).map(|i| i.to_string()).collect();
        let sizes: Vec<usize> = batches(small).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![10, 10, 3]);

        let big: Vec<String> = (0..5).map(|_| "x".repeat(100 * 1024)).collect();
        let sizes: Vec<usize> = batches(big).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![2, 2, 1]);

        let huge = vec!["x".repeat(300 * 1024), "y".into()];
        let sizes: Vec<usize> = batches(huge).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 1]);
        assert!(batches(Vec::new()).is_empty());
    }

    #[test]
    fn waits_round_to_whole_seconds_up_to_twenty() {
        assert_eq!(wait_seconds(Duration::ZERO), 0);
        assert_eq!(wait_seconds(Duration::from_millis(499)), 0);
        assert_eq!(wait_seconds(Duration::from_millis(500)), 1);
        assert_eq!(wait_seconds(Duration::from_millis(2400)), 2);
        assert_eq!(wait_seconds(Duration::from_secs(60)), 20);
    }
}
