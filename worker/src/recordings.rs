//! Pruning of the search recordings (issue 22): every mode's recorded
//! events older than its `recording.retentionDays` are deleted in batches
//! by the retention pass ([`crate::retention`]). A mode whose block is gone
//! (or the mode itself) keeps its rows for
//! [`DEFAULT_RETENTION_DAYS`] (7 days); a deleted project's rows went
//! with it.

use crate::error::WorkerError;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_matchmaker::recording::DEFAULT_RETENTION_DAYS;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::repos::{game_modes, recordings, StoreError};
use sea_orm::DatabaseConnection;

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
