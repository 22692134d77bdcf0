//! How long the worker's loops wait for PostgreSQL (docs/operations.md,
//! "What losing a dependency costs"): every bound on a database call of a
//! mode's cycle, its outbox, the sweep and the scheduler's listing is one
//! of these, so that a database that refuses connections, or takes them
//! and answers nothing (a black-holed network), never holds a cycle up for
//! longer.
//!
//! A call cut short is dropped where it stands, as a worker killed there
//! would be: what it was doing is done again later (the outbox keeps the
//! claimed matches until a later attempt stores them; every write of an
//! attempt is idempotent; an open transaction is rolled back). Its
//! connection is not pooled again before the driver's own check of it
//! has been answered, so no later call gets it mid-exchange.

use crate::error::WorkerError;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a cycle waits for the database in all for its reads and its
/// bookkeeping writes (the mode's hold and version, the assignment
/// timeouts, expired backfills, proposals' rows, the cycle's figures):
/// 1 s, counting only those waits. Once it is spent, the cycle's later
/// steps of the kind are left for a later cycle without a try. Its attempt
/// to store the matches it claimed is bounded apart ([`STORE_LIMIT`]).
pub const CYCLE_BUDGET: Duration = Duration::from_secs(1);

/// The most of [`CYCLE_BUDGET`] the read of the mode's hold (and the read
/// of its version before searches are failed) may take: 0.5 s, so that the
/// cycle's figures still get the rest.
pub const HOLD_READ_LIMIT: Duration = Duration::from_millis(500);

/// What one attempt to store a batch of a mode's outbox (the matches, their
/// tickets, deliveries, backfills and statuses) waits for at most: 3 s, the
/// worker's database timeout (`matchplane_store::db::DbTimeouts`). A batch
/// not stored by then stays in the outbox for the next attempt.
pub const STORE_LIMIT: Duration = Duration::from_secs(3);

/// What one of the scheduler's reads of the modes waits for at most: 10 s
/// (a whole listing of 10 000 modes takes about 50 ms). The scheduler goes
/// on moving modes between workers meanwhile.
pub const LISTING_LIMIT: Duration = Duration::from_secs(10);

/// What each database call of the webhook delivery loop waits for at
/// most: 3 s (a claim, a mode's target, an attempt's writes, a lock's
/// renewal, the backlog's count). A call cut short leaves what it wrote
/// as a worker stopped there would: a claim or an unfinished attempt
/// waits for its lock to run out and is taken again, so a delivery is
/// late, never lost. Without it, a connection whose database vanished
/// mid-call (a failover to another host) held the loop until TCP gave
/// up, minutes after the cycles had moved on.
pub const DELIVERY_LIMIT: Duration = Duration::from_secs(3);

/// What a single read outside a cycle's budget waits for at most (whether
/// a mode records its searches' ends): 0.5 s.
pub const READ_LIMIT: Duration = Duration::from_millis(500);

/// The time a cycle may still wait for the database: its steps draw from
/// it what they wait, until it is spent; the cycle's other work (Redis,
/// the matching core) takes none of it (made by the worker's loops only).
#[derive(Debug)]
pub struct Budget {
    /// What is left, in microseconds.
    left: AtomicU64,
}

impl Budget {
    /// A budget of `total`.
    pub(crate) fn new(total: Duration) -> Self {
        Self {
            left: AtomicU64::new(u64::try_from(total.as_micros()).unwrap_or(u64::MAX)),
        }
    }

    /// A cycle's budget: [`CYCLE_BUDGET`].
    pub(crate) fn cycle() -> Self {
        Self::new(CYCLE_BUDGET)
    }

    /// What is left of it.
    fn remaining(&self) -> Duration {
        Duration::from_micros(self.left.load(Ordering::Relaxed))
    }

    /// Whether any of it is left.
    pub(crate) fn left(&self) -> bool {
        !self.remaining().is_zero()
    }

    /// Takes `spent` off what is left (down to nothing).
    pub(crate) fn spend(&self, spent: Duration) {
        let spent = u64::try_from(spent.as_micros()).unwrap_or(u64::MAX);
        let _ = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(spent))
            });
    }

    /// `step`'s output if it ends within what is left of the budget (and
    /// within `cap`, when given), the time it took taken off the budget;
    /// else [`WorkerError::Timeout`] naming `what`. A spent budget does not
    /// start the step.
    pub(crate) async fn run<T>(
        &self,
        what: &'static str,
        cap: Option<Duration>,
        step: impl Future<Output = T>,
    ) -> Result<T, WorkerError> {
        let left = self.remaining();
        let limit = cap.map_or(left, |cap| cap.min(left));
        if limit.is_zero() {
            return Err(WorkerError::Timeout(what));
        }
        let started = Instant::now();
        let done = tokio::time::timeout(limit, step).await;
        self.spend(started.elapsed());
        done.map_err(|_| WorkerError::Timeout(what))
    }

    /// [`Budget::run`] of a step that may fail: its error, or the timeout.
    pub(crate) async fn try_run<T, E>(
        &self,
        what: &'static str,
        cap: Option<Duration>,
        step: impl Future<Output = Result<T, E>>,
    ) -> Result<T, WorkerError>
    where
        WorkerError: From<E>,
    {
        self.run(what, cap, step).await?.map_err(WorkerError::from)
    }
}

/// `step`'s output if it ends within `limit`; else [`WorkerError::Timeout`]
/// naming `what`.
pub(crate) async fn within<T, E>(
    limit: Duration,
    what: &'static str,
    step: impl Future<Output = Result<T, E>>,
) -> Result<T, WorkerError>
where
    WorkerError: From<E>,
{
    Budget::new(limit).try_run(what, None, step).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[tokio::test]
    async fn a_budget_counts_only_the_waits_and_a_spent_one_starts_nothing() {
        let budget = Budget::new(Duration::from_millis(200));
        // Time spent elsewhere takes none of it.
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(budget.left());
        let capped = budget
            .run(
                "capped",
                Some(Duration::from_millis(50)),
                std::future::pending::<()>(),
            )
            .await;
        assert!(matches!(capped, Err(WorkerError::Timeout("capped"))));
        assert!(budget.left());
        let rest = budget.run("rest", None, std::future::pending::<()>()).await;
        assert!(matches!(rest, Err(WorkerError::Timeout("rest"))));
        assert!(!budget.left());
        let started = AtomicBool::new(false);
        let late = budget
            .run("late", None, async {
                started.store(true, Ordering::SeqCst)
            })
            .await;
        assert!(late.is_err());
        assert!(
            !started.load(Ordering::SeqCst),
            "a spent budget started a step"
        );
    }
}
