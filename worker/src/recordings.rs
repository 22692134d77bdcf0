//! The worker's side of the search recordings (a mode's `recording`
//! block):
//!
//! - [`EndRecorder`] records the ends the worker makes: `matched` (when the
//!   match is stored), `expired` (the ticket's time to live, or a REST
//!   search whose polls lapsed) and `failed:<code>` (a search the cycle's
//!   re-check refused under a changed config). The API records starts,
//!   cancels and its own ends; both hash the player ids with the same
//!   key (`MATCHPLANE_RECORDING_KEY`, else the installation's key kept in
//!   the database), so a recording links a search's start to its end.
//!   Built without a key, it records nothing (its hashes would match no
//!   start).
//! - [`prune`]: every mode's recorded events older than its
//!   `recording.retentionDays`, never longer than its project's tier
//!   `retentionDays`, are deleted in batches by the retention pass
//!   ([`crate::retention`]), the modes sharing the pass's budget. A mode
//!   whose block is gone keeps its rows for [`DEFAULT_RETENTION_DAYS`] (7
//!   days, at most the tier's); a deleted mode's and a deleted project's
//!   rows went with them (the few rows written while the delete was
//!   under way, by the 7 days).

use crate::db_wait::READ_LIMIT;
use crate::error::WorkerError;
use crate::metrics;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_matchmaker::recording::DEFAULT_RETENTION_DAYS;
use matchplane_matchmaker::FailedSearch;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::recordings::{IdHasher, NewRecording};
use matchplane_store::repos::retention::ProjectRetention;
use matchplane_store::repos::{game_modes, recordings, StoreError};
use matchplane_store::tickets::TicketStore;
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the worker trusts a mode's `recording.enabled` as it read it.
pub const RECORDS_FLAG_TTL: Duration = Duration::from_secs(10);

/// Rows per `INSERT` of the worker's ends.
const END_BATCH: usize = 1_000;

/// Records the ends of searches the worker makes, for modes with
/// `recording.enabled`. Rows are written by a spawned task: a cycle never
/// waits for them, and a database failure loses the rows (logged), never
/// the cycle's work. Whether a mode records is read from its stored config
/// and kept [`RECORDS_FLAG_TTL`] per mode.
pub struct EndRecorder {
    hasher: Option<IdHasher>,
    db: DatabaseConnection,
    tickets: Arc<dyn TicketStore>,
    flags: moka::future::Cache<(String, String), bool>,
}

impl std::fmt::Debug for EndRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndRecorder")
            .field("keyed", &self.hasher.is_some())
            .finish_non_exhaustive()
    }
}

impl EndRecorder {
    /// A recorder hashing with `key` (`None`: records nothing), reading
    /// configs from `db` and expired searches' players from `tickets`.
    pub fn new(db: DatabaseConnection, key: Option<&str>, tickets: Arc<dyn TicketStore>) -> Self {
        Self {
            hasher: key.and_then(|key| IdHasher::new(key.as_bytes())),
            db,
            tickets,
            flags: moka::future::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(RECORDS_FLAG_TTL)
                .build(),
        }
    }

    /// Whether `mode` records (as its stored config says, read at most
    /// once per [`RECORDS_FLAG_TTL`]); `false` without a key, for a gone
    /// mode, and when the config cannot be read.
    pub async fn records(&self, mode: &ModeKey) -> bool {
        if self.hasher.is_none() {
            return false;
        }
        let key = (mode.project_id.clone(), mode.mode.clone());
        if let Some(flag) = self.flags.get(&key).await {
            return flag;
        }
        // Bounded (docs/operations.md, "What losing a dependency costs"):
        // a cycle and the sweep record their ends.
        let read = game_modes::get(&self.db, &mode.project_id, &mode.mode);
        let read = crate::db_wait::within(READ_LIMIT, "reading whether the mode records", read);
        let flag = match read.await {
            Ok(row) => serde_json::from_value::<GameModeConfig>(row.config)
                .is_ok_and(|config| config.records()),
            Err(WorkerError::Store(StoreError::NotFound)) => false,
            // Not cached: the next end reads again.
            Err(_) => return false,
        };
        self.flags.insert(key, flag).await;
        flag
    }

    /// Records that `players` (player ids) of `mode` were matched at
    /// `at_ms` (Unix milliseconds).
    pub async fn matched<'p>(
        &self,
        mode: &ModeKey,
        players: impl IntoIterator<Item = &'p str>,
        at_ms: i64,
    ) {
        let Some(hasher) = &self.hasher else { return };
        let rows: Vec<_> = players
            .into_iter()
            .map(|player| {
                hasher.end_row(
                    &mode.project_id,
                    &mode.mode,
                    player,
                    "matched".to_owned(),
                    at_ms,
                )
            })
            .collect();
        if !rows.is_empty() && self.records(mode).await {
            self.store(rows);
        }
    }

    /// Records the re-check failures `failed` of `mode` at `at_ms`.
    pub async fn failed(&self, mode: &ModeKey, failed: &[&FailedSearch], at_ms: i64) {
        let Some(hasher) = &self.hasher else { return };
        if failed.is_empty() || !self.records(mode).await {
            return;
        }
        let rows = failed
            .iter()
            .map(|f| {
                let outcome = format!("failed:{}", f.code.as_str());
                hasher.end_row(&mode.project_id, &mode.mode, &f.player_id, outcome, at_ms)
            })
            .collect();
        self.store(rows);
    }

    /// Records the expiry of the searches `ticket_ids` of `mode` at
    /// `at_ms`; each player is read from the ticket's record (one read per
    /// ticket, in recording modes only). A ticket whose record is gone is
    /// left out.
    pub async fn expired(&self, mode: &ModeKey, ticket_ids: &[String], at_ms: i64) {
        let Some(hasher) = &self.hasher else {
            return;
        };
        let tickets = &self.tickets;
        if ticket_ids.is_empty() || !self.records(mode).await {
            return;
        }
        let mut rows = Vec::with_capacity(ticket_ids.len());
        for ticket_id in ticket_ids {
            if let Ok(Some(ticket)) = tickets.get(&mode.project_id, ticket_id).await {
                rows.push(hasher.end_row(
                    &mode.project_id,
                    &mode.mode,
                    &ticket.player_id,
                    "expired".to_owned(),
                    at_ms,
                ));
            }
        }
        self.store(rows);
    }

    /// Writes `rows` in the background, [`END_BATCH`] per statement.
    fn store(&self, rows: Vec<NewRecording>) {
        if rows.is_empty() {
            return;
        }
        let db = self.db.clone();
        tokio::spawn(async move {
            for chunk in rows.chunks(END_BATCH) {
                // A deleted (or re-created) mode's ends are left out: the
                // new mode records only its own searches (docs/tuning.md).
                if let Err(error) = recordings::insert_batch_of_live_modes(&db, chunk).await {
                    tracing::warn!(%error, rows = chunk.len(), "recorded search ends were not stored");
                }
            }
        });
    }
}

/// Rows deleted per statement at most.
pub const PRUNE_BATCH: u64 = 5_000;

/// Rows one pass deletes at most, shared by every mode (20 full
/// statements); the rest waits for the next pass, which the retention loop
/// starts after a short pause ([`crate::retention`]).
pub const PRUNE_ROWS: u64 = 100_000;

/// How much one [`prune`] may delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneBudget {
    /// Rows per statement at most ([`PRUNE_BATCH`]).
    pub batch: u64,
    /// Rows in all at most ([`PRUNE_ROWS`]).
    pub rows: u64,
}

impl Default for PruneBudget {
    fn default() -> Self {
        Self {
            batch: PRUNE_BATCH,
            rows: PRUNE_ROWS,
        }
    }
}

/// What one [`prune`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Rows deleted.
    pub deleted: u64,
    /// Delete statements run.
    pub statements: u64,
    /// `false` when it stopped at its budget while a mode may have old rows
    /// left.
    pub complete: bool,
}

/// Days `project_id`'s mode `name` keeps its recording: its
/// `recording.retentionDays`, [`DEFAULT_RETENTION_DAYS`] when the block or
/// the mode is gone, at most `tier_days` (the project's tier
/// `retentionDays`, when known).
async fn retention_days(
    db: &DatabaseConnection,
    project_id: &str,
    name: &str,
    tier_days: Option<u32>,
) -> Result<u32, WorkerError> {
    let config = match game_modes::get(db, project_id, name).await {
        Ok(mode) => serde_json::from_value::<GameModeConfig>(mode.config).ok(),
        Err(StoreError::NotFound) => None,
        Err(other) => return Err(other.into()),
    };
    let days = config
        .and_then(|c| c.recording)
        .map_or(DEFAULT_RETENTION_DAYS, |r| r.retention_days);
    Ok(tier_days.map_or(days, |tier| days.min(tier)).max(1))
}

/// Deletes every mode's recorded events past its retention at `now` (see
/// [`retention_days`]; `tiers` gives each project's tier `retentionDays`),
/// [`PruneBudget::rows`] rows at most in all, oldest first per mode.
///
/// The budget is shared fairly: the modes with old rows go in rounds, each
/// mode one statement per round of at most an equal share of the budget
/// left (at most [`PruneBudget::batch`] rows); a mode whose statement comes
/// back short is done, and rounds repeat while the budget lasts. One mode's
/// backlog so never keeps another mode's old rows waiting past this pass
/// (unless more modes have old rows than the budget has rows).
/// Each statement's rows and time are counted in the retention metrics
/// (`table="search_recordings"`).
///
/// # Errors
/// A database failure (what was deleted before it stays deleted).
pub async fn prune(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    tiers: &[ProjectRetention],
    budget: PruneBudget,
) -> Result<PruneReport, WorkerError> {
    let tier_days: HashMap<&str, u32> = tiers
        .iter()
        .map(|t| (t.project_id.as_str(), t.retention_days))
        .collect();
    let mut pending = Vec::new();
    for (project_id, name) in recordings::modes(db).await? {
        let tier = tier_days.get(project_id.as_str()).copied();
        let days = retention_days(db, &project_id, &name, tier).await?;
        let before = (now - TimeDelta::days(i64::from(days))).timestamp_millis();
        pending.push((project_id, name, before));
    }
    let batch = budget.batch.max(1);
    let mut left = budget.rows.max(1);
    let mut report = PruneReport::default();
    while !pending.is_empty() {
        if left == 0 {
            return Ok(report);
        }
        let modes = u64::try_from(pending.len()).unwrap_or(u64::MAX);
        let share = (left / modes).clamp(1, batch);
        let mut next = Vec::with_capacity(pending.len());
        for mode in pending {
            if left == 0 {
                next.push(mode);
                continue;
            }
            let limit = share.min(left);
            let (project_id, name, before) = &mode;
            let timer = Instant::now();
            let deleted = recordings::prune(db, project_id, name, *before, limit).await?;
            metrics::retention_recordings(deleted, timer.elapsed());
            report.statements += 1;
            report.deleted += deleted;
            left = left.saturating_sub(deleted);
            if deleted >= limit {
                next.push(mode);
            }
        }
        pending = next;
    }
    report.complete = true;
    Ok(report)
}
