//! The ports a process builds once (store, queue, clock, ID allocator, client cache, blob
//! store) and the environment; every request context shares them.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::{load_client, ApiKey, ClientCache, ClientRecord, SANDBOX_KEY_ID};
use crate::blobs::Blobs;
use crate::clock::Clock;
use crate::error::ApiError;
use crate::ids::IdAllocator;
use crate::queue::sequencer::Sequencer;
use crate::queue::Queue;
use crate::store::{Index, Query, SkRange, Store, StoreError, Val, Write, MAX_TRANSACTION_WRITES};
use crate::webhooks::{Envelope, UrlPolicy, OUTBOX_PK};

/// `sandbox` (the local API's default) or `production`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Environment {
    Sandbox,
    Production,
}

impl Environment {
    pub fn name(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }
    pub fn url_policy(self) -> UrlPolicy {
        match self {
            Environment::Sandbox => UrlPolicy::Sandbox,
            Environment::Production => UrlPolicy::Production,
        }
    }
}

/// The ports of one process, shared by its requests.
pub struct Ports {
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    pub clock: Arc<dyn Clock>,
    pub env: Environment,
    pub ids: IdAllocator,
    /// Client records, cached for at most 60 s (shared by the functions of one process).
    pub clients: Arc<ClientCache>,
    /// The build identifier reported by `/v3/status`.
    pub version: &'static str,
    /// Document bytes, for the functions that keep documents.
    pub blobs: Option<Arc<dyn Blobs>>,
    /// The order books' sequencer, for the functions that place orders.
    pub sequencer: Option<Arc<dyn Sequencer<Ports>>>,
}

impl Ports {
    pub fn new(store: Arc<dyn Store>, queue: Arc<dyn Queue>, clock: Arc<dyn Clock>, env: Environment) -> Self {
        Ports {
            store,
            queue,
            clock,
            env,
            ids: IdAllocator::new(20),
            clients: Arc::new(ClientCache::new(Duration::from_secs(60))),
            version: env!("CARGO_PKG_VERSION"),
            blobs: None,
            sequencer: None,
        }
    }

    /// Hands committed events to the queue, then, when the queue is durable, clears their
    /// outbox entries (an in-memory queue's deliverer clears each after its attempt). An
    /// entry left behind by a crash is re-sent by the outbox sweep.
    pub async fn dispatch(&self, envelopes: Vec<Envelope>) {
        if envelopes.is_empty() {
            return;
        }
        if let Err(e) = self.queue.send(crate::webhooks::call_messages(&envelopes)).await {
            tracing::error!(error = %e, "webhooks left in the outbox: queue send failed");
            return;
        }
        if !self.queue.durable() {
            return;
        }
        for chunk in envelopes.chunks(MAX_TRANSACTION_WRITES) {
            let deletes = chunk
                .iter()
                .map(|e| Write::Delete {
                    key: e.outbox_key(),
                    cond: None,
                })
                .collect();
            if let Err(e) = self.store.write(deletes).await {
                tracing::warn!(error = %e, "outbox entries not cleared; the sweep will resend them");
            }
        }
    }

    /// Hands over outbox entries older than `age`: those a crash left between the commit and
    /// the hand-over to the queue. Answers how many were re-sent.
    pub async fn sweep_outbox(&self, age: Duration) -> Result<usize, StoreError> {
        let cutoff = self.clock.now().timestamp_millis() - i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
        let mut q = Query::new(Index::Table, OUTBOX_PK);
        q.sk = SkRange::Between(String::new(), format!("{cutoff:015}#~"));
        q.limit = MAX_TRANSACTION_WRITES as u32;
        let mut sent = 0;
        loop {
            let page = self.store.query(&q).await?;
            let envelopes: Vec<Envelope> = page
                .items
                .iter()
                .filter_map(|i| {
                    i.get("d")
                        .and_then(Val::as_str)
                        .and_then(|d| serde_json::from_str(d).ok())
                })
                .collect();
            sent += envelopes.len();
            self.dispatch(envelopes).await;
            match page.next {
                Some(next) => q.start = Some(next),
                None => return Ok(sent),
            }
        }
    }

    /// Stores a client record (new, or over the version it was read at) and forgets this
    /// process's cached copy. `false` when it exists already or changed since (nothing
    /// written).
    pub async fn save_client(&self, rec: &ClientRecord) -> Result<bool, ApiError> {
        let saved = crate::store::write_once(self.store.as_ref(), vec![rec.save()]).await?;
        if saved {
            self.clients.invalidate(&rec.id);
        }
        Ok(saved)
    }

    /// Creates or refreshes the local API's sandbox client: every method and scope, every
    /// field, no allow-list or parent (CONTRACT; a store written before the operator was
    /// refused to narrow it gets them back), and the given key as its active key `dev` (a
    /// restart with another key replaces the old one, and one the operator deactivated is
    /// active again, so the key the start prints works; keys the operator added stay).
    pub async fn ensure_dev_client(&self, id: &str, api_key: &str) -> Result<(), ApiError> {
        let created = self.clock.now().format("%Y-%m-%d %H:%M:%S").to_string();
        let dev_key = ApiKey {
            key_id: SANDBOX_KEY_ID.into(),
            ..ApiKey::of(api_key, created)
        };
        let rec = match load_client(self.store.as_ref(), id).await? {
            None => ClientRecord::new(
                id.to_owned(),
                None,
                dev_key,
                vec!["*".into()],
                vec!["*".into()],
                Vec::new(),
            ),
            Some(mut rec) => {
                let keyed = rec
                    .keys
                    .iter()
                    .any(|k| k.key_id == SANDBOX_KEY_ID && k.hash == dev_key.hash && k.active);
                if keyed && rec.has_every_right() {
                    return Ok(());
                }
                if !keyed {
                    rec.keys.retain(|k| k.key_id != SANDBOX_KEY_ID);
                    rec.keys.push(dev_key);
                }
                ClientRecord {
                    methods: vec!["*".into()],
                    scopes: vec!["*".into()],
                    ip_allowlist: Vec::new(),
                    field_permissions: None,
                    parent: None,
                    ..rec
                }
            }
        };
        if self.save_client(&rec).await? {
            Ok(())
        } else {
            Err(ApiError::internal("the sandbox client changed while it was set up"))
        }
    }
}
