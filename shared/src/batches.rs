//! Work the service does on a schedule (CONTRACT, "Payments, custody and escrow", "Batches
//! and schedules"): each batch lists what is due and processes one item at a time,
//! idempotently, in the item's client's context, so an item processed twice (a message
//! delivered twice, a run-now beside the schedule) changes nothing the second time.
//!
//! In AWS an EventBridge schedule at the batch's local time invokes the batches function,
//! which on a business day enqueues one message per due item; the same function consumes
//! them. The operator's run-now processes everything due at once, on any day. The local API
//! runs the schedules on the wall clock only with `IPS_SCHEDULES=on`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Timelike, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::calendar::{is_business_day, local_date};
use crate::ctx::Ctx;
use crate::error::ApiError;
use crate::http::operator::{OpError, OpReply, OperatorCtx, OperatorRequest};
use crate::ports::Ports;

/// One item a batch has to process, and whose it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Due {
    pub client_id: String,
    pub id: String,
}

/// An item on the batch queue: the batch's name beside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub batch: String,
    #[serde(flatten)]
    pub due: Due,
}

pub type DueFuture = Pin<Box<dyn Future<Output = Result<Vec<Due>, ApiError>> + Send>>;
pub type ProcessFuture = Pin<Box<dyn Future<Output = Result<bool, ApiError>> + Send>>;

/// A batch: its name (`POST /operator/batches/{name}/run`), when its schedule fires, what
/// is due, and how one item is processed (`true` when it changed something).
#[derive(Clone, Copy)]
pub struct Batch {
    pub name: &'static str,
    /// The zone and local hours (minute 0) of its schedule, on business days (every day when
    /// `every_day`).
    pub zone: Tz,
    pub hours: &'static [u32],
    pub every_day: bool,
    pub due: fn(Arc<Ports>) -> DueFuture,
    pub process: fn(Ctx, String) -> ProcessFuture,
}

impl Batch {
    /// Whether the schedule runs on the day `now` falls on in the batch's zone.
    pub fn runs_on(&self, now: DateTime<Utc>) -> bool {
        self.every_day || is_business_day(local_date(now, self.zone))
    }

    /// How many of the schedule's hours have come by `now`, in its zone.
    pub fn runs_due(&self, now: DateTime<Utc>) -> usize {
        let hour = now.with_timezone(&self.zone).hour();
        self.hours.iter().filter(|h| **h <= hour).count()
    }

    /// What the schedule enqueues when it fires: every due item on a business day, nothing
    /// on another day.
    pub async fn scheduled(&self, ports: &Arc<Ports>) -> Result<Vec<Due>, ApiError> {
        if !self.runs_on(ports.clock.now()) {
            return Ok(Vec::new());
        }
        (self.due)(ports.clone()).await
    }

    /// Processes one item in its client's context and hands its webhooks to the queue; an
    /// item of a client that no longer exists is skipped. The client is read through the
    /// process's client cache: a batch's items mostly share a few clients.
    pub async fn process_one(&self, ports: &Arc<Ports>, due: &Due) -> Result<bool, ApiError> {
        let label = format!("batch-{}", self.name);
        let Some(ctx) = Ctx::background(ports, &due.client_id, self.name, &label).await? else {
            return Ok(false);
        };
        let changed = (self.process)(ctx.clone(), due.id.clone()).await;
        ports.dispatch(ctx.take_committed()).await;
        changed
    }

    /// Processes everything due now (the operator's run-now: any day, any hour): how many
    /// items changed.
    pub async fn run_now(&self, ports: &Arc<Ports>) -> Result<usize, ApiError> {
        let mut changed = 0;
        for due in (self.due)(ports.clone()).await? {
            if self.process_one(ports, &due).await? {
                changed += 1;
            }
        }
        Ok(changed)
    }

    /// The operator's run-now (`POST /operator/batches/{name}/run`, body `{}`): `{"batch",
    /// "processed": N}`.
    pub async fn run_for_operator(&self, octx: &OperatorCtx, req: &OperatorRequest) -> Result<OpReply, OpError> {
        req.no_body()?;
        let processed = self.run_now(&octx.ports).await?;
        Ok(OpReply::ok(
            serde_json::json!({"batch": self.name, "processed": processed}),
        ))
    }
}

/// Boxes an async due-list function into a [`Batch`]'s `due`: `due!(ach_due)`.
#[macro_export]
macro_rules! batch_due {
    ($f:path) => {
        |ports| Box::pin($f(ports))
    };
}

/// Boxes an async item processor into a [`Batch`]'s `process`: `batch_process!(submit)`.
#[macro_export]
macro_rules! batch_process {
    ($f:path) => {
        |ctx, id| Box::pin($f(ctx, id))
    };
}

/// The local API's schedules (`IPS_SCHEDULES=on`): once a minute, each batch runs once for
/// each of its hours that has come on a business day in its zone. What ran is kept in the
/// store, so a restart neither runs a batch again (a debit made after the day's 6 PM run keeps
/// its void window) nor skips a run it missed while down.
pub async fn run_schedules(ports: Arc<Ports>, batches: Vec<Batch>) {
    let mut last_run = Vec::with_capacity(batches.len());
    for batch in &batches {
        last_run.push(last_run_of(ports.store.as_ref(), batch.name).await);
    }
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        tick.tick().await;
        let now = ports.clock.now();
        for (batch, last) in batches.iter().zip(last_run.iter_mut()) {
            let today = local_date(now, batch.zone);
            let due = batch.runs_due(now);
            let done = if last.0 == Some(today) { last.1 } else { 0 };
            if due <= done || !batch.runs_on(now) {
                continue;
            }
            *last = (Some(today), due);
            match batch.run_now(&ports).await {
                Ok(n) => tracing::info!(batch = batch.name, processed = n, "scheduled batch ran"),
                Err(e) => tracing::error!(batch = batch.name, error = %e, "scheduled batch failed"),
            }
            if let Err(e) = ports.store.write(vec![last_run_write(batch.name, today, due)]).await {
                tracing::error!(batch = batch.name, error = %e, "the scheduled run was not recorded");
            }
        }
    }
}

fn last_run_key(batch: &str) -> crate::store::Key {
    crate::store::Key::new("SCHEDULE", batch)
}

/// A batch's last scheduled run: the day (in its zone) and how many of that day's hours ran.
async fn last_run_of(store: &dyn crate::store::Store, batch: &str) -> (Option<chrono::NaiveDate>, usize) {
    use crate::store::Val;
    let item = match store.get(&last_run_key(batch)).await {
        Ok(item) => item,
        Err(e) => {
            tracing::error!(batch, error = %e, "the last scheduled run could not be read");
            None
        }
    };
    let text = |name: &str| {
        item.as_ref()
            .and_then(|i| i.get(name))
            .and_then(Val::as_str)
            .map(str::to_owned)
    };
    let day = text("day").and_then(|d| chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok());
    let runs = text("runs").and_then(|n| n.parse().ok()).unwrap_or(0);
    (day, runs)
}

fn last_run_write(batch: &str, day: chrono::NaiveDate, runs: usize) -> crate::store::Write {
    use crate::store::Val;
    let mut item = last_run_key(batch).item();
    item.insert("day".into(), Val::S(day.format("%Y-%m-%d").to_string()));
    item.insert("runs".into(), Val::S(runs.to_string()));
    crate::store::Write::Put { item, cond: None }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static LISTED: AtomicUsize = AtomicUsize::new(0);

    fn counted(_: Arc<Ports>) -> DueFuture {
        LISTED.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Vec::new()) })
    }

    fn nothing(_: Ctx, _: String) -> ProcessFuture {
        Box::pin(async { Ok(false) })
    }

    /// The schedules of a process started at the clock's time, stopped once its pass is
    /// recorded (or after a second).
    async fn start(ports: &Arc<Ports>, batch: Batch) {
        let run = tokio::spawn(run_schedules(ports.clone(), vec![batch]));
        for _ in 0..50 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            if last_run_of(ports.store.as_ref(), batch.name).await.0.is_some() {
                break;
            }
        }
        run.abort();
    }

    #[tokio::test]
    async fn a_restart_runs_no_batch_again_and_catches_up_a_missed_one() {
        let clock = Arc::new(crate::clock::SettableClock::system());
        let app = crate::App::new(
            Arc::new(crate::store::embedded::EmbeddedStore::in_memory()),
            Arc::new(crate::queue::embedded::EmbeddedQueue::default()),
            clock.clone(),
            crate::Environment::Sandbox,
            crate::Routes::new(),
        );
        let ports = app.ports.clone();
        let batch = Batch {
            name: "test",
            zone: chrono_tz::America::New_York,
            hours: &[18],
            every_day: false,
            due: counted,
            process: nothing,
        };
        // Tuesday 1 December 2026, 19:00 Eastern: the 18:00 run was missed, so it runs.
        clock.set("2026-12-02T00:00:00Z".parse().unwrap());
        start(&ports, batch).await;
        assert_eq!(LISTED.load(Ordering::SeqCst), 1);
        // A minute later, restarted: it ran today already.
        clock.set("2026-12-02T00:01:00Z".parse().unwrap());
        start(&ports, batch).await;
        assert_eq!(LISTED.load(Ordering::SeqCst), 1, "not again after a restart");
    }
}
