//! The worker's side of the search recordings (a mode's `recording`
//! block):
//!
//! - [`EndRecorder`] records the ends the worker makes: `matched` (when the
//!   match is stored), `expired` (the ticket's time to live, or a REST
//!   search whose polls lapsed) and `failed:<code>` (a search the cycle's
//!   re-check refused under a changed config). The API records starts,
//!   cancels and its own ends; both hash the player ids with the same
//!   `MATCHPLANE_RECORDING_KEY`, so a recording links a search's start to
//!   its end. A worker without the key records nothing (its hashes would
//!   match no start).
//! - [`prune`]: every mode's recorded events older than its
//!   `recording.retentionDays` are deleted in batches by the retention pass
//!   ([`crate::retention`]). A mode whose block is gone (or the mode
//!   itself) keeps its rows for [`DEFAULT_RETENTION_DAYS`] (7 days); a
//!   deleted project's rows went with it.

use crate::error::WorkerError;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_matchmaker::recording::DEFAULT_RETENTION_DAYS;
use matchplane_matchmaker::FailedSearch;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::recordings::{IdHasher, NewRecording};
use matchplane_store::repos::{game_modes, recordings, StoreError};
use matchplane_store::tickets::TicketStore;
use sea_orm::DatabaseConnection;
use std::sync::Arc;
use std::time::Duration;

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
        let flag = match game_modes::get(&self.db, &mode.project_id, &mode.mode).await {
            Ok(row) => serde_json::from_value::<GameModeConfig>(row.config)
                .is_ok_and(|config| config.records()),
            Err(StoreError::NotFound) => false,
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
                if let Err(error) = recordings::insert_batch(&db, chunk).await {
                    tracing::warn!(%error, rows = chunk.len(), "recorded search ends were not stored");
                }
            }
        });
    }
}

/// Rows deleted per statement.
pub const PRUNE_BATCH: u64 = 5_000;

/// Statements of one pass at most (the rest waits a pass).
pub const PRUNE_BATCHES: usize = 20;

/// Days `project_id`'s mode `name` keeps its recording.
async fn retention_days(
    db: &DatabaseConnection,
    project_id: &str,
    name: &str,
) -> Result<u32, WorkerError> {
    let config = match game_modes::get(db, project_id, name).await {
        Ok(mode) => serde_json::from_value::<GameModeConfig>(mode.config).ok(),
        Err(StoreError::NotFound) => None,
        Err(other) => return Err(other.into()),
    };
    Ok(config
        .and_then(|c| c.recording)
        .map_or(DEFAULT_RETENTION_DAYS, |r| r.retention_days))
}

/// Deletes every mode's recorded events past its retention at `now`,
/// [`PRUNE_BATCH`] rows per statement, [`PRUNE_BATCHES`] statements at
/// most; returns how many.
///
/// # Errors
/// A database failure (what was deleted before it stays deleted).
pub async fn prune(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<u64, WorkerError> {
    let mut total = 0;
    let mut statements = 0;
    for (project_id, name) in recordings::modes(db).await? {
        let days = retention_days(db, &project_id, &name).await?;
        let before = (now - TimeDelta::days(i64::from(days))).timestamp_millis();
        while statements < PRUNE_BATCHES {
            statements += 1;
            let deleted = recordings::prune(db, &project_id, &name, before, PRUNE_BATCH).await?;
            total += deleted;
            if deleted < PRUNE_BATCH {
                break;
            }
        }
    }
    Ok(total)
}
