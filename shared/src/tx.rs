//! The one transaction helper: an operation states what one attempt writes, which failed
//! conditions are its own errors, and which webhooks it fires ([`Plan`]); [`Ctx::transact`]
//! reads, plans and commits, re-planning after a concurrent change with backoff and jitter.
//! No handler holds a retry loop, and `StoreError` is matched here and in the store only.

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::ApiError;
use crate::store::{StoreError, Write};
use crate::webhooks::Event;

/// How many times an operation reads again and re-plans after a concurrent change (another
/// request took the units, the same record changed, a transaction collided) before giving up.
/// Part 1 has every one of many concurrent calls on one ID succeed (the last writer's
/// snapshot standing): at 16, some of 32 concurrent updates of one party lost every round.
pub const ATTEMPTS: usize = 64;

/// What one attempt commits: writes, the conditions that are the operation's own errors,
/// webhooks, and the answer once committed.
#[must_use]
pub struct Plan<T> {
    writes: Vec<Write>,
    /// Positions in `writes` whose failed condition answers the error beside it.
    checks: Vec<(usize, ApiError)>,
    events: Vec<Event>,
    answer: T,
}

impl<T> Plan<T> {
    /// Answers `answer` once `writes` (and the events added) commit as one transaction.
    pub fn new(writes: Vec<Write>, answer: T) -> Self {
        Plan {
            writes,
            checks: Vec::new(),
            events: Vec::new(),
            answer,
        }
    }

    /// Answers `answer` without writing (the webhooks added still commit).
    pub fn answer(answer: T) -> Self {
        Plan::new(Vec::new(), answer)
    }

    pub fn write(self, write: Write) -> Self {
        self.writes([write])
    }

    pub fn writes(mut self, writes: impl IntoIterator<Item = Write>) -> Self {
        self.writes.extend(writes);
        self
    }

    pub fn event(self, event: Event) -> Self {
        self.events([event])
    }

    pub fn events(mut self, events: impl IntoIterator<Item = Event>) -> Self {
        self.events.extend(events);
        self
    }

    /// A write whose failed condition is the operation's `error` (a duplicate, a marker
    /// another record holds) rather than a concurrent change to re-plan after.
    pub fn check(mut self, write: Write, error: ApiError) -> Self {
        self.checks.push((self.writes.len(), error));
        self.writes.push(write);
        self
    }
}

impl Ctx {
    /// Runs `attempt` (given this context and the attempt number) and commits its plan; when
    /// a concurrent change fails a condition or the transaction collides, runs it again on
    /// fresh reads. A failed check answers its error; nothing is written on any failure, and
    /// the plan's webhooks are sent only once it commits.
    pub async fn transact<T>(
        &self,
        mut attempt: impl AsyncFnMut(Ctx, usize) -> Result<Plan<T>, ApiError>,
    ) -> Result<T, ApiError> {
        for n in 0..ATTEMPTS {
            let plan = attempt(self.clone(), n).await?;
            if plan.writes.is_empty() && plan.events.is_empty() {
                return Ok(plan.answer);
            }
            let Plan {
                writes,
                checks,
                events,
                answer,
            } = plan;
            // A single conditional write reports no position.
            let single = writes.len() == 1;
            match self.commit(writes, events).await {
                Ok(()) => return Ok(answer),
                Err(StoreError::ConditionFailed { index }) => {
                    let index = index.or(single.then_some(0));
                    if let Some((_, e)) = checks.into_iter().find(|(i, _)| Some(*i) == index) {
                        return Err(e);
                    }
                    // A record changed since it was read: its other writers are at work, and
                    // planning again at once would meet them again.
                    backoff(n).await;
                }
                Err(StoreError::Conflict) => backoff(n).await,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ApiError::internal("changed concurrently on every attempt"))
    }
}

/// A short, growing, jittered pause before planning again after a concurrent change, so that
/// writers that collided do not collide again in lockstep. It grows to 128-256 ms: a hundred
/// writers of one record on a slow store still each get their turn within the attempts (about
/// ten seconds in all at worst, well inside part 1's 60 s).
async fn backoff(attempt: usize) {
    let base = 1u64 << attempt.min(7);
    let jitter = getrandom::u64().unwrap_or(0) % (base + 1);
    tokio::time::sleep(Duration::from_millis(base + jitter)).await;
}
