//! The assignment timeout (SPEC 9): in a mode with `assignment`, a made
//! match nobody assigned within `waitSeconds` is released by the mode's
//! lease holder as `unassigned`: its tickets may search again with their
//! first `queuedAt`, and its players are told `assignment_timeout` (a
//! socket still open searches again and says `requeued`).
//!
//! The release is the same compare-and-set as the studio's, so an
//! assignment or a release landing at the same moment wins or loses whole.

use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, Utc};
use matchplane_store::pool::{ModeKey, PoolStore};
use matchplane_store::repos::backfills;
use matchplane_store::repos::match_status::{self, ReleaseOutcome, UNASSIGNED};
use matchplane_store::tickets::{publish, StatusMessage};
use sea_orm::DatabaseConnection;

/// Matches one pass releases at most (the rest waits for the next cycle).
const BATCH: u64 = 500;

/// Releases `mode`'s made matches whose assignment wait is over at `now`
/// as `unassigned` and tells their players. Returns how many it released.
///
/// # Errors
/// A database or pool store failure (what was released stays released; a
/// match whose tickets were not freed yet is not seen again, its tickets
/// stay spent).
pub async fn time_out(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    config: &ModeConfig,
    now: DateTime<Utc>,
) -> Result<usize, WorkerError> {
    let Some(assignment) = &config.config.assignment else {
        return Ok(0);
    };
    let wait = chrono::Duration::milliseconds((assignment.wait_seconds * 1000.0) as i64);
    let since = now - chrono::Duration::days(1);
    let due =
        match_status::unassigned_due(db, &mode.project_id, &mode.mode, now - wait, since, BATCH)
            .await?;
    let mut released = 0;
    let now_secs = now.timestamp_micros() as f64 / 1e6;
    for row in due {
        let outcome = match_status::release(
            db,
            &mode.project_id,
            &row.id,
            UNASSIGNED,
            chrono::Duration::days(2),
            now,
        )
        .await?;
        let ReleaseOutcome::Released(row) = outcome else {
            continue;
        };
        released += 1;
        crate::metrics::released(mode, UNASSIGNED);
        let seated = backfills::seated_at(db, &mode.project_id, &row.id).await?;
        let tickets = match_status::released_tickets(&row, &seated);
        let freed = pool
            .release_tickets(mode, &row.id, &tickets, now_secs)
            .await?;
        for ticket in &freed {
            publish(pool, ticket, &StatusMessage::AssignmentTimeout).await;
        }
    }
    Ok(released)
}
