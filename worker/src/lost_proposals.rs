//! Proposals lost with the pool's data (docs/acceptance.md, "When a
//! proposal is lost"). A proposal lives in the pool (Redis); its row is
//! stored `proposed` and changed by the closing's record. When the pool
//! loses its data (Redis restarted empty, or flushed), its proposals are
//! gone with their records, and their rows would say `proposed` forever.
//!
//! The mode's lease holder looks once a minute, when its outbox is empty
//! (every closing's record is stored), at the rows still `proposed` whose
//! deadline passed more than [`GRACE`] ago, and marks `cancelled` each one
//! the pool no longer holds, its answers as stored. A proposal the pool
//! closed has its record queued in the same step, so once the outbox is
//! empty its row is no longer `proposed` (the mark is a compare-and-set on
//! that status). The rows are read on a partial index of the open
//! proposals only. Should a made record still come for a row marked so,
//! it marks the row `made`
//! ([`matchplane_store::repos::match_status::mark_made`]).

use crate::db_wait::Budget;
use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_store::pool::{ModeKey, PoolStore};
use matchplane_store::repos::match_status;
use sea_orm::DatabaseConnection;
use std::time::{Duration, Instant};

/// How long past its deadline a row may stay `proposed` before the worker
/// asks the pool about it: 10 minutes.
pub const GRACE: Duration = Duration::from_secs(600);

/// How often a mode's lease holder looks: once a minute.
pub const EVERY: Duration = Duration::from_secs(60);

/// Rows looked at per look, at most (the rest waits a minute).
const LIMIT: u64 = 500;

/// What a whole look may take (its pool reads too): 2 s.
const LOOK_LIMIT: Duration = Duration::from_secs(2);

/// The proposals a look covers: made since the mode was (the stored
/// matches of its name from before are a deleted mode's, whose delete
/// cancelled its proposals) and [`GRACE`] past their deadline
/// (`timeoutSeconds` of the mode's acceptance, `timeout`).
fn window(config: &ModeConfig, timeout: f64, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let past = GRACE + Duration::from_secs_f64(timeout.clamp(0.0, 600.0));
    let to = now - TimeDelta::from_std(past).unwrap_or(TimeDelta::MAX);
    (config.created_at, to)
}

/// Marks `cancelled` the rows of `mode` left `proposed` by proposals the
/// pool no longer holds (see the module's comment); returns how many.
/// Nothing in a mode without acceptance (one whose acceptance was turned
/// off lets its open proposals finish by their rules).
///
/// # Errors
/// A database or pool failure, or database calls that took more than a
/// second in all (what was marked stays marked; the next look goes on).
pub async fn reconcile(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    config: &ModeConfig,
    now: DateTime<Utc>,
) -> Result<usize, WorkerError> {
    let Some(acceptance) = &config.config.acceptance else {
        return Ok(0);
    };
    let (from, to) = window(config, acceptance.timeout_seconds, now);
    if from >= to {
        return Ok(0);
    }
    // What the look may wait for the database in all: it runs between
    // cycles.
    let budget = Budget::new(Duration::from_secs(1));
    let key = (mode.project_id.as_str(), mode.mode.as_str());
    let read = match_status::proposed_between(db, key, (from, to), LIMIT);
    let rows = budget.try_run("reading proposals past their deadline", None, read);
    let rows = rows.await?;
    let mut marked = 0;
    for (match_id, answers) in rows {
        if pool.proposal(mode, &match_id).await?.is_some() {
            continue;
        }
        let mark = match_status::mark_cancelled(db, &mode.project_id, &match_id, answers);
        if budget
            .try_run("marking a lost proposal", None, mark)
            .await?
        {
            tracing::warn!(game_mode = %mode.mode, match_id, "a proposal the pool no longer holds is marked cancelled");
            marked += 1;
        }
    }
    Ok(marked)
}

/// [`reconcile`] if [`EVERY`] passed since `last` (which then becomes
/// now) and the mode's outbox is `drained` (nothing in it at the cycle's
/// start, and the cycle stored what it queued); at most [`LOOK_LIMIT`]. A
/// failure is logged.
pub async fn look_if_due(
    (pool, db): (&dyn PoolStore, &DatabaseConnection),
    mode: &ModeKey,
    config: &ModeConfig,
    drained: bool,
    last: &mut Instant,
) {
    if !drained || last.elapsed() < EVERY {
        return;
    }
    *last = Instant::now();
    let look = reconcile(pool, db, mode, config, Utc::now());
    match tokio::time::timeout(LOOK_LIMIT, look).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            tracing::warn!(game_mode = %mode.mode, %error, "looking for lost proposals failed");
        }
        Err(_) => tracing::warn!(game_mode = %mode.mode, "looking for lost proposals timed out"),
    }
}
