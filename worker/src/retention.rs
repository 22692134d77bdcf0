//! Retention (docs/api-keys.md, docs/deployment.md#scaling): the worker's pruning of what is older than it is
//! kept, the one place where the worker deletes old rows.
//!
//! | rows | kept | how they are found |
//! |---|---|---|
//! | matches, with their seated tickets, backfill requests and fills, webhook deliveries and attempts | the project's tier `retentionDays` (free 30, pro 90, enterprise 365; a new tier 90) | `matches (project_id, created_at)` |
//! | webhook deliveries and their attempts | the same | `webhook_deliveries (project_id, created_at)` |
//! | applied rating results | the same | `rating_results (project_id, created_at)` |
//! | the stats history (`mode_stats_minutes`) | 14 days ([`stats_history::RETENTION_DAYS`]) | `mode_stats_minutes (minute)` |
//! | a mode's recorded searches | the mode's `recording.retentionDays` (7 days without the block), at most the tier's `retentionDays` | `search_recordings (project_id, game_mode, at_ms)`, see [`crate::recordings::prune`] |
//!
//! One worker at a time prunes: a pass starts only under the `retention`
//! job lease ([`job_leases`]), taken by one upsert that never waits, renewed
//! before every batch and kept between passes, so the holder goes on
//! pruning and the other workers skip until it stops (its lease runs out
//! after [`RetentionConfig::lease_ttl`], or is released at shutdown).
//!
//! A pass deletes in batches of [`RetentionConfig::batch`] rows (ids read by
//! an index range scan, then deleted with their children in one short
//! transaction: row locks on old rows only, never a table lock), and
//! pauses [`RetentionConfig::pause`] after each batch, so the API's
//! statements interleave with it and the database's other work (vacuum,
//! replication) keeps up. The search recordings are pruned by
//! [`crate::recordings::prune`]: at most [`RetentionConfig::recording_rows`]
//! rows a pass, shared fairly by the modes; a pass that stops at that
//! budget is not complete, and the next one starts after
//! [`RetentionConfig::backlog_pause`] rather than the interval, until the
//! backlog is gone. Rows pruned are counted in
//! [`metrics::RETENTION_PRUNED`] per table, each batch's time in
//! [`metrics::RETENTION_BATCH`], and a finished pass sets
//! [`metrics::RETENTION_LAST_PASS`].

use crate::error::WorkerError;
use crate::metrics;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_store::repos::retention::{self, Pruned};
use matchplane_store::repos::{job_leases, stats_history};
use sea_orm::DatabaseConnection;
use std::future::Future;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The job lease's name.
pub const JOB: &str = "retention";

/// How the pruning is paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionConfig {
    /// How often a pass starts (5 minutes): a row is deleted at most this
    /// long after its retention ran out, once the backlog is gone. A pass
    /// that stopped at its budget is followed after [`Self::backlog_pause`]
    /// instead.
    pub interval: Duration,
    /// Rows (matches, deliveries, results, minutes) per batch: 1000.
    pub batch: u64,
    /// Pause after each batch: 50 ms.
    pub pause: Duration,
    /// How long the job lease lasts unless renewed (it is renewed before
    /// every batch): 10 minutes, longer than [`Self::interval`], so the
    /// holder keeps it between passes.
    pub lease_ttl: Duration,
    /// Search recording rows per statement at most: 5000
    /// ([`crate::recordings::PRUNE_BATCH`]).
    pub recording_batch: u64,
    /// Search recording rows one pass deletes at most, shared by the modes:
    /// 100 000 ([`crate::recordings::PRUNE_ROWS`]).
    pub recording_rows: u64,
    /// Pause before the next pass after one that stopped at its budget with
    /// rows left (rather than [`Self::interval`]): 5 seconds.
    pub backlog_pause: Duration,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(300),
            batch: 1000,
            pause: Duration::from_millis(50),
            lease_ttl: Duration::from_secs(600),
            recording_batch: crate::recordings::PRUNE_BATCH,
            recording_rows: crate::recordings::PRUNE_ROWS,
            backlog_pause: Duration::from_secs(5),
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Rows deleted per table (matches and what belongs to them).
    pub pruned: Pruned,
    /// Stats-history minutes deleted.
    pub stats_minutes: u64,
    /// Recorded search events deleted.
    pub recorded_events: u64,
    /// Whether the search recordings' pruning stopped at its budget
    /// ([`RetentionConfig::recording_rows`]) with old rows possibly left.
    pub backlog: bool,
    /// Batches run (each a transaction or a statement).
    pub batches: u64,
    /// Projects looked at.
    pub projects: usize,
    /// `false` when the pass stopped early (shutdown, or the lease lost) or
    /// left a backlog ([`Self::backlog`]).
    pub complete: bool,
}

impl PassReport {
    /// Every row deleted.
    pub fn total(&self) -> u64 {
        self.pruned.total() + self.stats_minutes + self.recorded_events
    }
}

/// The pruning of one worker.
pub struct Pruner<'a> {
    /// The database.
    pub db: &'a DatabaseConnection,
    /// This worker's id, as the lease holder.
    pub holder: &'a str,
    /// The pacing.
    pub config: RetentionConfig,
    /// Stops a pass between two batches.
    pub cancel: &'a CancellationToken,
}

/// Why a pass stopped before its end.
enum Stop {
    /// Shutdown, or the lease went to another worker.
    Early,
    /// A database failure.
    Failed(WorkerError),
}

impl From<WorkerError> for Stop {
    fn from(err: WorkerError) -> Self {
        Stop::Failed(err)
    }
}

impl Pruner<'_> {
    /// One pass: deletes what is older than its retention at `now`. `None`
    /// when another worker holds the job lease (nothing was done).
    ///
    /// # Errors
    /// A database failure; what earlier batches deleted stays deleted, and
    /// the next pass goes on from there.
    pub async fn pass(&self, now: DateTime<Utc>) -> Result<Option<PassReport>, WorkerError> {
        let started = Instant::now();
        if !job_leases::try_take(self.db, JOB, self.holder, now, self.config.lease_ttl).await? {
            return Ok(None);
        }
        let mut report = PassReport::default();
        match self.run(now, started, &mut report).await {
            Ok(()) => {
                report.complete = !report.backlog;
                if report.complete {
                    metrics::retention_pass(now);
                }
                Ok(Some(report))
            }
            Err(Stop::Early) => Ok(Some(report)),
            Err(Stop::Failed(err)) => Err(err),
        }
    }

    async fn run(
        &self,
        now: DateTime<Utc>,
        started: Instant,
        report: &mut PassReport,
    ) -> Result<(), Stop> {
        let batch = self.config.batch.max(1);
        let stats_before = now - TimeDelta::days(stats_history::RETENTION_DAYS);
        self.batches(now, started, report, |db| async move {
            let deleted = stats_history::prune(db, stats_before, batch).await?;
            Ok((Pruned::default(), deleted, deleted >= batch))
        })
        .await?;
        if self.cancel.is_cancelled() {
            return Err(Stop::Early);
        }
        let projects = retention::projects(self.db)
            .await
            .map_err(WorkerError::from)?;
        let budget = crate::recordings::PruneBudget {
            batch: self.config.recording_batch,
            rows: self.config.recording_rows,
        };
        let recorded = crate::recordings::prune(self.db, now, &projects, budget).await?;
        report.recorded_events += recorded.deleted;
        report.batches += recorded.statements;
        report.backlog = !recorded.complete;
        if self.cancel.is_cancelled() {
            return Err(Stop::Early);
        }
        report.projects = projects.len();
        for project in &projects {
            let before = now - TimeDelta::days(i64::from(project.retention_days));
            let id = project.project_id.as_str();
            // Deliveries first: most of a match's rows are its attempts.
            self.batches(now, started, report, |db| async move {
                let pruned = retention::prune_deliveries(db, id, before, batch).await?;
                Ok((pruned, 0, pruned.deliveries >= batch))
            })
            .await?;
            self.batches(now, started, report, |db| async move {
                let pruned = retention::prune_matches(db, id, before, batch).await?;
                Ok((pruned, 0, pruned.matches >= batch))
            })
            .await?;
            self.batches(now, started, report, |db| async move {
                let pruned = retention::prune_rating_results(db, id, before, batch).await?;
                Ok((pruned, 0, pruned.rating_results >= batch))
            })
            .await?;
        }
        Ok(())
    }

    /// Runs `step` (one batch: rows deleted, stats minutes deleted, whether
    /// the batch was full) until a batch is not full, renewing the lease
    /// before each and pausing after each full one.
    async fn batches<'d, F, Fut>(
        &'d self,
        now: DateTime<Utc>,
        started: Instant,
        report: &mut PassReport,
        step: F,
    ) -> Result<(), Stop>
    where
        F: Fn(&'d DatabaseConnection) -> Fut,
        Fut: Future<Output = Result<(Pruned, u64, bool), matchplane_store::repos::StoreError>>,
    {
        loop {
            if self.cancel.is_cancelled() {
                return Err(Stop::Early);
            }
            let at = now + TimeDelta::from_std(started.elapsed()).unwrap_or(TimeDelta::MAX);
            let held = job_leases::try_take(self.db, JOB, self.holder, at, self.config.lease_ttl)
                .await
                .map_err(WorkerError::from)?;
            if !held {
                tracing::warn!(
                    holder = self.holder,
                    "the retention lease was taken over; the pass stops"
                );
                return Err(Stop::Early);
            }
            let timer = Instant::now();
            let (pruned, minutes, full) = step(self.db).await.map_err(WorkerError::from)?;
            metrics::retention_batch(&pruned, minutes, timer.elapsed());
            report.pruned.add(&pruned);
            report.stats_minutes += minutes;
            report.batches += 1;
            if !full {
                return Ok(());
            }
            tokio::select! {
                () = self.cancel.cancelled() => return Err(Stop::Early),
                () = tokio::time::sleep(self.config.pause) => {}
            }
        }
    }
}

/// Runs a pass every [`RetentionConfig::interval`] (the first at once), or
/// [`RetentionConfig::backlog_pause`] after one that was not complete (it
/// stopped at its budget, or early), until `shutdown`, then gives the lease
/// up.
pub(crate) async fn run(
    db: DatabaseConnection,
    holder: String,
    config: RetentionConfig,
    shutdown: CancellationToken,
) {
    let pruner = Pruner {
        db: &db,
        holder: &holder,
        config,
        cancel: &shutdown,
    };
    let mut wait = Duration::ZERO;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(wait) => {}
        }
        let started = Instant::now();
        // The next pass an interval after this one started, or a short
        // pause after this one ended when it left work behind.
        let on_time = || config.interval.saturating_sub(started.elapsed());
        wait = match pruner.pass(Utc::now()).await {
            Ok(None) => {
                tracing::trace!("another worker holds the retention lease");
                on_time()
            }
            // Every pass (one each interval, 5 minutes by default) logs at
            // info, an empty one too: it shows pruning runs.
            Ok(Some(report)) => {
                tracing::info!(
                    rows = report.total(),
                    matches = report.pruned.matches,
                    deliveries = report.pruned.deliveries,
                    stats_minutes = report.stats_minutes,
                    recorded_events = report.recorded_events,
                    batches = report.batches,
                    complete = report.complete,
                    "retention pass"
                );
                if report.complete {
                    on_time()
                } else {
                    // A backlog left (or the pass stopped early): the next
                    // pass goes on from here soon, not an interval later.
                    config.backlog_pause
                }
            }
            Err(error) => {
                tracing::warn!(%error, "the retention pass failed; the next one goes on");
                on_time()
            }
        };
    }
    if let Err(error) = job_leases::release(&db, JOB, &holder).await {
        tracing::debug!(%error, "releasing the retention lease failed; it runs out");
    }
}
