//! The assignment timeout (docs/acceptance.md): in a mode with `assignment`, a made
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
use matchplane_store::repos::match_status::{self, ReleaseOutcome, UNASSIGNED};
use matchplane_store::tickets::StatusMessage;
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
    // Its own matches only: a deleted mode's of the same name were
    // released at its delete, or never waited for an assignment.
    let since = (now - chrono::Duration::days(1)).max(config.created_at);
    let due = match_status::unassigned_due(
        db,
        &mode.project_id,
        (&mode.mode, Some(config.id.as_str())),
        now - wait,
        since,
        BATCH,
    )
    .await?;
    let mut released = 0;
    for row in due {
        let told = (UNASSIGNED, &StatusMessage::AssignmentTimeout);
        let window = chrono::Duration::days(2);
        let outcome = matchplane_store::released::release_match::<WorkerError>(
            db, pool, mode, &row.id, told, window, now,
        )
        .await?;
        if let ReleaseOutcome::Released(_) = outcome {
            released += 1;
            crate::metrics::released(mode, UNASSIGNED);
        }
    }
    Ok(released)
}

/// What an idle mode's loop knows of its next assignment timeout: the
/// pool store's probe, which decides that a mode is idle, does not see the
/// made matches waiting in PostgreSQL, so the loop keeps their earliest
/// deadline and releases them when it passes, without any search arriving
/// (docs/acceptance.md, "Telling the players where to play"). A busy cycle
/// releases them itself ([`time_out`] in the tick) and may make new ones,
/// so it leaves the next deadline to be read again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NextTimeout {
    /// When the next wait ends; `None` when no match waits.
    at: Option<DateTime<Utc>>,
}

/// How soon a failed read of the deadlines is tried again.
const RETRY_AFTER_ERROR: chrono::Duration = chrono::Duration::seconds(1);

impl NextTimeout {
    /// Not known yet: the next idle cycle reads it.
    pub(crate) fn unknown() -> Self {
        Self {
            at: Some(DateTime::<Utc>::MIN_UTC),
        }
    }

    /// An idle cycle: if a wait may be over, releases the due
    /// matches and reads when the next wait ends. Failures are logged and
    /// retried a second later; the mode's cycle never waits on them.
    pub(crate) async fn idle_cycle(
        &mut self,
        pool: &dyn PoolStore,
        db: &DatabaseConnection,
        mode: &ModeKey,
        config: &ModeConfig,
    ) {
        let now = Utc::now();
        let Some(assignment) = &config.config.assignment else {
            self.at = None;
            return;
        };
        if self.at.is_none_or(|at| at > now) {
            return;
        }
        let wait = chrono::Duration::milliseconds((assignment.wait_seconds * 1000.0) as i64);
        let next = match time_out(pool, db, mode, config, now).await {
            Ok(_) => {
                let since = (now - chrono::Duration::days(1)).max(config.created_at);
                let rated_in = Some(config.id.as_str());
                match_status::first_unassigned_made_at(
                    db,
                    &mode.project_id,
                    (&mode.mode, rated_in),
                    since,
                )
                .await
                .map_err(WorkerError::from)
            }
            Err(err) => Err(err),
        };
        self.at = match next {
            Ok(made_at) => made_at.map(|at| at + wait),
            Err(err) => {
                tracing::warn!(mode = %mode.mode, error = %err, "assignment timeouts failed");
                Some(now + RETRY_AFTER_ERROR)
            }
        };
    }
}
