//! The context of one authenticated request: the process's ports, the client, and the
//! webhooks its committed changes produced.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::auth::{ClientRecord, PiiLevel};
use crate::blobs::Blobs;
use crate::clock::timestamp;
use crate::error::ApiError;
use crate::http::params::Params;
use crate::ids::IdKind;
use crate::ports::Ports;
use crate::store::{Store, StoreError, Write};
use crate::webhooks::{registration_key, Envelope, Event};

/// Webhook envelopes a request committed, handed over once its response is decided.
pub type Committed = Arc<Mutex<Vec<Envelope>>>;

/// The context of one authenticated request.
#[derive(Clone)]
pub struct Ctx {
    pub app: Arc<Ports>,
    pub client: Arc<ClientRecord>,
    pub ip: IpAddr,
    pub request_id: Arc<str>,
    /// The operation as registered under the name the client called (an alias keeps its own
    /// name, which is also the webhook it fires); the path for resource routes.
    pub operation: Arc<str>,
    /// The PII level granted (resource-style reads); `High` for method-style calls.
    pub pii: PiiLevel,
    pub(crate) committed: Committed,
    /// Set once the operation has fired a webhook (registered or not): a method part 1's
    /// table does not list that fired none sends its response record.
    pub(crate) fired: Arc<AtomicBool>,
}

impl Ctx {
    /// The context of work the service does on its own for `client` (the operator's
    /// actions, batches), fired as `operation`. Its webhooks wait in [`Ctx::committed`].
    pub fn system(
        ports: Arc<Ports>,
        client: Arc<ClientRecord>,
        request_id: Arc<str>,
        operation: &str,
        committed: Committed,
    ) -> Ctx {
        Ctx {
            app: ports,
            client,
            ip: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            request_id,
            operation: operation.into(),
            pii: PiiLevel::High,
            committed,
            fired: Arc::default(),
        }
    }

    /// [`Ctx::system`] for work the service does on its own for `client_id` (a batch item, a
    /// book message), the client read through the process's cache; `None` when the client
    /// no longer exists. `label` starts its request ID.
    pub async fn background(
        ports: &Arc<Ports>,
        client_id: &str,
        operation: &str,
        label: &str,
    ) -> Result<Option<Ctx>, ApiError> {
        let Some(client) = ports.clients.get(ports.store.as_ref(), client_id).await? else {
            return Ok(None);
        };
        let request_id: Arc<str> = format!("{label}-{}", crate::ids::unique()).into();
        Ok(Some(Ctx::system(
            ports.clone(),
            client,
            request_id,
            operation,
            Arc::default(),
        )))
    }

    /// The webhooks committed so far, taken to hand to the queue.
    pub fn take_committed(&self) -> Vec<Envelope> {
        std::mem::take(&mut *self.committed.lock().unwrap_or_else(|e| e.into_inner()))
    }

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
        self.check_field_names(params, fields.iter().map(std::slice::from_ref))
    }

    /// [`Ctx::check_fields`] for fields with aliases (each entry one field's names): a
    /// permission under any of a field's names covers all of them (CONTRACT: aliases are
    /// accepted as the field itself).
    pub fn check_aliased_fields(&self, params: &Params, fields: &[&[&str]]) -> Result<(), ApiError> {
        self.check_field_names(params, fields.iter().copied())
    }

    /// `110` naming the first of the fields a resource-style change sets (by the record's
    /// names) that the key may set under none of its names (`fields` as for
    /// [`Ctx::check_aliased_fields`]; a name in no entry is a field of its own).
    pub fn check_changed_fields<'a>(
        &self,
        changed: impl IntoIterator<Item = &'a str>,
        fields: &[&[&str]],
    ) -> Result<(), ApiError> {
        for name in changed {
            let aliases = fields
                .iter()
                .find(|names| names.contains(&name))
                .copied()
                .unwrap_or_default();
            if !self.client.may_set(name) && !self.may_set_any(aliases) {
                return Err(ApiError::FieldPermission(name.to_owned()));
            }
        }
        Ok(())
    }

    /// Whether the key may set the field named `names` (under any of its names).
    pub fn may_set_any(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.client.may_set(n))
    }

    /// `110` naming the first field sent (under any of its names) that the key may set under
    /// none of them.
    fn check_field_names<'a>(
        &self,
        params: &Params,
        fields: impl Iterator<Item = &'a [&'a str]>,
    ) -> Result<(), ApiError> {
        for names in fields {
            let sent = names.iter().find(|n| params.value(n).is_some());
            if let Some(sent) = sent.filter(|_| !self.may_set_any(names)) {
                return Err(ApiError::FieldPermission((*sent).to_owned()));
            }
        }
        Ok(())
    }

    /// Whether the operation fired a webhook (registered or not).
    pub(crate) fn has_fired(&self) -> bool {
        self.fired.load(Ordering::Relaxed)
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
    pub(crate) async fn commit(&self, mut writes: Vec<Write>, events: Vec<Event>) -> Result<(), StoreError> {
        if !events.is_empty() {
            self.fired.store(true, Ordering::Relaxed);
        }
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

/// A context of client `c1` over an in-memory embedded store and a local blob directory
/// (served as `http://local.test`), for unit tests.
#[cfg(test)]
pub(crate) async fn test_ctx() -> (Ctx, std::path::PathBuf) {
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("ips-ctx-{}", crate::ids::unique()));
    let blobs = crate::blobs::DirBlobs::open(dir.clone(), "http://local.test").unwrap();
    let store: Arc<dyn crate::store::Store> = Arc::new(crate::store::embedded::EmbeddedStore::in_memory());
    let app = crate::App::new(
        store.clone(),
        Arc::new(crate::queue::embedded::EmbeddedQueue::default()),
        Arc::new(crate::clock::SystemClock),
        crate::Environment::Sandbox,
        crate::Routes::new(),
    )
    .with_blobs(Arc::new(blobs));
    let app = Arc::new(app);
    app.ensure_dev_client("c1", "k").await.unwrap();
    let client = crate::auth::load_client(store.as_ref(), "c1").await.unwrap().unwrap();
    let ctx = Ctx {
        app: app.ports.clone(),
        client: Arc::new(client),
        ip: std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        request_id: "t".into(),
        operation: "test".into(),
        pii: crate::auth::PiiLevel::High,
        committed: Arc::default(),
        fired: Arc::default(),
    };
    (ctx, dir)
}
