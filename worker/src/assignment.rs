//! The assignment timeout (docs/acceptance.md): in a mode with `assignment`, a made
//! match nobody assigned within `waitSeconds` is released by the mode's
//! lease holder as `unassigned`: its tickets may search again with their
//! first `queuedAt`, and its players are told `assignment_timeout` (a
//! socket still open searches again and says `requeued`).
//!
//! The release is the same compare-and-set as the studio's, so an
//! assignment or a release landing at the same moment wins or loses whole.

use crate::db_wait::{within, Budget, STORE_LIMIT};
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
/// Waits for the database as a cycle does ([`crate::db_wait::CYCLE_BUDGET`]).
///
/// # Errors
/// A database or pool store failure, or a database that does not answer
/// in time (what was released stays released; a match whose tickets were
/// not freed yet is not seen again, its tickets stay spent).
pub async fn time_out(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    config: &ModeConfig,
    now: DateTime<Utc>,
) -> Result<usize, WorkerError> {
    release_due(pool, db, mode, config, now, &Budget::cycle()).await
}

/// [`time_out`] within what is left of a cycle's `budget`: the read of the
/// due matches and the releases draw on it, and a release starts only
/// while some is left. A release once started is not cut at the budget's
/// end (it would leave its tickets spent), only when the database does not
/// answer it within [`STORE_LIMIT`], which ends the pass.
///
/// # Errors
/// As [`time_out`].
pub(crate) async fn release_due(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    config: &ModeConfig,
    now: DateTime<Utc>,
    budget: &Budget,
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
    );
    let due = budget.try_run("reading the due assignment timeouts", None, due);
    let mut released = 0;
    for row in due.await? {
        if !budget.left() {
            // The rest waits for the next cycle.
            break;
        }
        let told = (UNASSIGNED, &StatusMessage::AssignmentTimeout);
        let window = chrono::Duration::days(2);
        let release = matchplane_store::released::release_match::<WorkerError>(
            db, pool, mode, &row.id, told, window, now,
        );
        let started = std::time::Instant::now();
        let released_one = within(STORE_LIMIT, "releasing an unassigned match", release).await;
        budget.spend(started.elapsed());
        let outcome = released_one?;
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
    /// matches and reads when the next wait ends, within what is left of
    /// the cycle's `budget`. Failures are logged and retried a second
    /// later; the mode's cycle never waits on them longer.
    pub(crate) async fn idle_cycle(
        &mut self,
        pool: &dyn PoolStore,
        db: &DatabaseConnection,
        mode: &ModeKey,
        config: &ModeConfig,
        budget: &Budget,
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
        let next = match release_due(pool, db, mode, config, now, budget).await {
            Ok(_) => {
                let since = (now - chrono::Duration::days(1)).max(config.created_at);
                let rated_in = Some(config.id.as_str());
                let first = match_status::first_unassigned_made_at(
                    db,
                    &mode.project_id,
                    (&mode.mode, rated_in),
                    since,
                );
                budget
                    .try_run("reading the next assignment timeout", None, first)
                    .await
            }
            Err(err) => Err(err),
        };
        self.at = match next {
            Ok(made_at) => made_at.map(|at| at + wait),
            Err(err) => {
                tracing::warn!(game_mode = %mode.mode, error = %err, "assignment timeouts failed");
                Some(now + RETRY_AFTER_ERROR)
            }
        };
    }
}
