//! Configuration, read once at start from an allow-list of environment variables, and the
//! ports it selects.

use std::path::PathBuf;
use std::sync::Arc;

use crate::aws::LazyClient;
use crate::blobs::{Blobs, DirBlobs, S3Blobs};
use crate::ports::Environment;
use crate::queue::embedded::EmbeddedQueue;
use crate::queue::sqs::SqsQueue;
use crate::queue::Queue;
use crate::store::dynamo::DynamoStore;
use crate::store::embedded::EmbeddedStore;
use crate::store::Store;

/// The local API's store, queue and blob store.
pub type LocalPorts = (Arc<dyn Store>, Arc<dyn Queue>, Arc<dyn Blobs>);

/// Where records live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// The embedded store in this directory.
    Embedded(PathBuf),
    /// DynamoDB (and SQS), from the standard AWS environment.
    DynamoDb,
}

/// The service's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `IPS_ENV`: `sandbox` (default) or `production`.
    pub env: Environment,
    /// `IPS_STORE` (`embedded`, the default, or `dynamodb`) with `IPS_DATA_DIR`.
    pub store: StoreKind,
    /// `IPS_TABLE`: the DynamoDB table (default `ips`).
    pub table: String,
    /// `IPS_WEBHOOK_QUEUE_URL` (Lambda) or, when absent, `IPS_WEBHOOK_QUEUE` (a name the
    /// local API creates; default `ips-webhooks`).
    pub webhook_queue: QueueRef,
    /// `IPS_BUCKET`: the S3 bucket of documents (default `ips-documents`). The embedded store
    /// keeps documents in `IPS_DATA_DIR/blobs` instead.
    pub bucket: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueRef {
    Url(String),
    Name(String),
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Config {
    /// Reads the configuration; `default_store` applies when `IPS_STORE` is unset.
    pub fn from_env(default_store: &str) -> Result<Config, String> {
        let env = match var("IPS_ENV").as_deref() {
            None | Some("sandbox") => Environment::Sandbox,
            Some("production") => Environment::Production,
            Some(other) => return Err(format!("IPS_ENV must be sandbox or production, not {other}")),
        };
        let store = match var("IPS_STORE").as_deref().unwrap_or(default_store) {
            "embedded" => StoreKind::Embedded(PathBuf::from(
                var("IPS_DATA_DIR").unwrap_or_else(|| "./.ips-data".into()),
            )),
            "dynamodb" => StoreKind::DynamoDb,
            other => return Err(format!("IPS_STORE must be embedded or dynamodb, not {other}")),
        };
        let webhook_queue = match var("IPS_WEBHOOK_QUEUE_URL") {
            Some(url) => QueueRef::Url(url),
            None => QueueRef::Name(var("IPS_WEBHOOK_QUEUE").unwrap_or_else(|| "ips-webhooks".into())),
        };
        Ok(Config {
            env,
            store,
            table: var("IPS_TABLE").unwrap_or_else(|| "ips".into()),
            webhook_queue,
            bucket: var("IPS_BUCKET").unwrap_or_else(|| "ips-documents".into()),
        })
    }

    /// The local API's ports: the embedded store, or DynamoDB and SQS with their table and
    /// queue created when missing.
    /// Documents go to `IPS_DATA_DIR/blobs` (served back by the local API at `base_url`) or to
    /// the S3 bucket, created when missing.
    pub async fn local_ports(&self, base_url: &str) -> Result<LocalPorts, String> {
        match &self.store {
            StoreKind::Embedded(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                let store = EmbeddedStore::open(&dir.join("store.redb")).map_err(|e| e.to_string())?;
                let blobs = DirBlobs::open(dir.join("blobs"), base_url).map_err(|e| e.to_string())?;
                Ok((Arc::new(store), Arc::new(EmbeddedQueue::default()), Arc::new(blobs)))
            }
            StoreKind::DynamoDb => {
                let sdk = crate::aws::sdk_config()?;
                let (store, queue) = self.aws_ports(&sdk, true).await?;
                let blobs = S3Blobs::new(&sdk, self.bucket.clone());
                blobs.ensure_bucket().await.map_err(|e| e.to_string())?;
                Ok((store, queue, Arc::new(blobs)))
            }
        }
    }

    /// DynamoDB and SQS. With `create`, a missing table and queue are created (the local
    /// API); in Lambda the template owns them. Lambda functions call only this, so the
    /// embedded store is not linked into them.
    pub async fn aws_ports(
        &self,
        sdk: &aws_types::SdkConfig,
        create: bool,
    ) -> Result<(Arc<dyn Store>, Arc<dyn Queue>), String> {
        let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), self.table.clone());
        if create {
            store.ensure_table().await.map_err(|e| e.to_string())?;
        }
        let queue = match &self.webhook_queue {
            QueueRef::Url(url) => SqsQueue::new(LazyClient::new(sdk, aws_sdk_sqs::Client::new), url.clone()),
            QueueRef::Name(name) if create => SqsQueue::ensure(aws_sdk_sqs::Client::new(sdk), name)
                .await
                .map_err(|e| e.to_string())?,
            QueueRef::Name(name) => return Err(format!("IPS_WEBHOOK_QUEUE_URL is required (queue {name})")),
        };
        Ok((Arc::new(store), Arc::new(queue)))
    }
}
