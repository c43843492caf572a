//! The application: ports, configuration and routes, and the request context operations see.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::auth::{ClientCache, ClientRecord, PiiLevel};
use crate::blobs::Blobs;
use crate::clock::{timestamp, Clock};
use crate::error::ApiError;
use crate::http::params::Params;
use crate::http::router::Routes;
use crate::ids::{IdAllocator, IdKind};
use crate::queue::Queue;
use crate::store::{Index, Query, SkRange, Store, StoreError, Val, Write, MAX_TRANSACTION_WRITES};
use crate::webhooks::{registration_key, Envelope, Event, UrlPolicy, OUTBOX_PK};

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

/// How the operator API is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperatorAccess {
    /// Not served (the client API functions in AWS).
    Disabled,
    /// `Authorization: Bearer <token>` (the local API and tests).
    Token(String),
    /// Already authorized in front of the function (API Gateway IAM authorization).
    Trusted,
}

/// Everything a request needs, built once per process.
pub struct App {
    pub store: Arc<dyn Store>,
    pub queue: Arc<dyn Queue>,
    pub clock: Arc<dyn Clock>,
    pub env: Environment,
    pub ids: IdAllocator,
    pub clients: ClientCache,
    pub routes: Routes,
    /// Who may reach `/operator/...` in this process.
    pub operator: OperatorAccess,
    /// The build identifier reported by `/v3/status`.
    pub version: &'static str,
    /// Document bytes, for the functions that keep documents.
    pub blobs: Option<Arc<dyn Blobs>>,
}

impl App {
    pub fn new(
        store: Arc<dyn Store>,
        queue: Arc<dyn Queue>,
        clock: Arc<dyn Clock>,
        env: Environment,
        routes: Routes,
    ) -> Self {
        App {
            store,
            queue,
            clock,
            env,
            ids: IdAllocator::new(20),
            clients: ClientCache::new(Duration::from_secs(60)),
            routes,
            operator: OperatorAccess::Disabled,
            version: env!("CARGO_PKG_VERSION"),
            blobs: None,
        }
    }

    pub fn with_blobs(mut self, blobs: Arc<dyn Blobs>) -> Self {
        self.blobs = Some(blobs);
        self
    }

    pub fn with_operator(mut self, access: OperatorAccess) -> Self {
        self.operator = access;
        self
    }

    /// Hands committed events to the queue, then clears their outbox entries. An entry
    /// left behind by a crash between the two is re-sent by the outbox sweep.
    pub async fn dispatch(&self, envelopes: Vec<Envelope>) {
        if envelopes.is_empty() {
            return;
        }
        let bodies = envelopes.iter().map(Envelope::to_json).collect();
        if let Err(e) = self.queue.send(bodies).await {
            tracing::error!(error = %e, "webhooks left in the outbox: queue send failed");
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
}

/// The context of one authenticated request.
#[derive(Clone)]
pub struct Ctx {
    pub app: Arc<App>,
    pub client: Arc<ClientRecord>,
    pub ip: IpAddr,
    pub request_id: Arc<str>,
    /// The operation as registered under the name the client called (an alias keeps its own
    /// name, which is also the webhook it fires); the path for resource routes.
    pub operation: Arc<str>,
    /// The PII level granted (resource-style reads); `High` for method-style calls.
    pub pii: PiiLevel,
    pub(crate) committed: Arc<Mutex<Vec<Envelope>>>,
}

impl Ctx {
    pub fn client_id(&self) -> &str {
        &self.client.id
    }

    pub fn store(&self) -> &dyn Store {
        self.app.store.as_ref()
    }

    /// The current time as a response timestamp.
    pub fn now(&self) -> String {
        timestamp(self.app.clock.now())
    }

    /// `110` when the request sets a field the key has no permission for.
    pub fn check_fields(&self, params: &Params, fields: &[&str]) -> Result<(), ApiError> {
        match fields
            .iter()
            .find(|f| params.value(f).is_some() && !self.client.may_set(f))
        {
            Some(f) => Err(ApiError::FieldPermission((*f).to_owned())),
            None => Ok(()),
        }
    }

    /// The blob store; a function deployed without one answers `1500` (a configuration
    /// error, logged) rather than losing a document.
    pub fn blobs(&self) -> Result<&dyn Blobs, ApiError> {
        self.app
            .blobs
            .as_deref()
            .ok_or_else(|| ApiError::internal("no blob store configured for this function"))
    }

    pub async fn next_id(&self, kind: IdKind) -> Result<String, ApiError> {
        self.app.ids.next(self.store(), kind).await
    }

    /// Applies a state change and the outbox entries of its events atomically; the events
    /// are delivered after the response. Call it last: a failed call sends no webhook.
    /// Only events whose method has a registration are written: the others would reach no
    /// URL, and skipping them saves the outbox write, the hand-over and its clean-up.
    pub async fn commit(&self, mut writes: Vec<Write>, events: Vec<Event>) -> Result<(), StoreError> {
        let now = self.app.clock.now().timestamp_millis();
        let mut envelopes = Vec::with_capacity(events.len());
        for event in events {
            if self
                .store()
                .get(&registration_key(self.client_id(), &event.method))
                .await?
                .is_some()
            {
                envelopes.push(Envelope::new(self.client_id(), event, now));
            }
        }
        writes.extend(envelopes.iter().map(Envelope::outbox_write));
        if !writes.is_empty() {
            self.store().write(writes).await?;
        }
        self.committed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(envelopes);
        Ok(())
    }
}
