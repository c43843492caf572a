//! An in-process queue (unbounded channel). Messages live in memory: the durable copy of a
//! webhook is its outbox entry in the store, removed only after its delivery attempt.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, Mutex};

use super::{Message, Queue, QueueError};

pub struct EmbeddedQueue {
    tx: mpsc::UnboundedSender<String>,
    rx: Mutex<mpsc::UnboundedReceiver<String>>,
    seq: AtomicU64,
}

impl Default for EmbeddedQueue {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        EmbeddedQueue {
            tx,
            rx: Mutex::new(rx),
            seq: AtomicU64::new(0),
        }
    }
}

#[async_trait]
impl Queue for EmbeddedQueue {
    async fn send(&self, bodies: Vec<String>) -> Result<(), QueueError> {
        for b in bodies {
            self.tx.send(b).map_err(|e| QueueError::Backend(e.to_string()))?;
        }
        Ok(())
    }

    async fn receive(&self, max: u32, wait: Duration) -> Result<Vec<Message>, QueueError> {
        let mut rx = self.rx.lock().await;
        let mut out = Vec::new();
        let first = match tokio::time::timeout(wait, rx.recv()).await {
            Ok(Some(b)) => b,
            Ok(None) | Err(_) => return Ok(out),
        };
        let mut bodies = vec![first];
        while bodies.len() < max as usize {
            match rx.try_recv() {
                Ok(b) => bodies.push(b),
                Err(_) => break,
            }
        }
        for body in bodies {
            let id = self.seq.fetch_add(1, Ordering::Relaxed).to_string();
            out.push(Message {
                receipt: id.clone(),
                id,
                body,
            });
        }
        Ok(out)
    }

    fn durable(&self) -> bool {
        false
    }

    async fn ack(&self, _receipt: &str) -> Result<(), QueueError> {
        Ok(())
    }
}
