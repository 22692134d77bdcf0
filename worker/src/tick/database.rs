//! What a cycle reads from and writes to PostgreSQL: the mode's hold and
//! the cycle's figures. Each draws on the cycle's budget
//! ([`crate::db_wait`]), so that a database out of reach, refusing
//! connections or answering nothing at all, never holds the cycle up
//! (docs/operations.md, "What losing a dependency costs"): the cycle goes
//! on with the last hold it read, and loses its figures.

use crate::db_wait::{Budget, HOLD_READ_LIMIT};
use crate::modes::{ModeConfig, Revision};
use chrono::{DateTime, Utc};
use matchplane_store::entities::mode_cycle_stat;
use matchplane_store::pool::ModeKey;
use matchplane_store::pool::PoolStore;
use matchplane_store::repos::stats_history::{self, Figures};
use matchplane_store::repos::{cycle_stats, mode_holds, StoreError};
use sea_orm::DatabaseConnection;
use std::sync::Mutex;
use std::time::Duration;

/// What a cycle's read of its mode's row told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ModeRow {
    /// Whether the mode's matching is held.
    pub held: bool,
    /// Whether the database holds another version of the mode than the
    /// cycle's config, or none (deleted); `false` when the read failed.
    pub replaced: bool,
}

/// Reads `mode`'s row once a cycle: whether its matching is held
/// (docs/game-modes.md, "Holding matching"), so every worker sees a hold
/// at its next cycle, and whether `config`, the cycle's, is still the
/// mode's (its row and version: a mode deleted and created again is
/// another row) (docs/game-modes.md, "Changing a mode"). A read that answers
/// updates `last` (what this loop last read) and, when that changed, the
/// copy the pool keeps for other workers
/// ([`matchplane_store::pool::Leases::keep_hold`]). A read that fails or
/// gets no answer within [`HOLD_READ_LIMIT`] or what is left of `budget`
/// (logged) reads as `last`, else as the pool's copy (a worker that took
/// the mode over during an outage), else as not held, and the config as
/// current.
pub(super) async fn read_row(
    db: &DatabaseConnection,
    pool: &dyn PoolStore,
    mode: &ModeKey,
    config: &ModeConfig,
    last: Option<&Mutex<Option<bool>>>,
    budget: &Budget,
) -> ModeRow {
    let read = budget
        .run(
            "reading the mode's hold",
            Some(HOLD_READ_LIMIT),
            mode_holds::get(db, &mode.project_id, &mode.mode),
        )
        .await;
    let error = match read {
        Ok(Ok((id, version, hold))) => {
            let held = hold.is_some();
            if let Some(last) = last {
                let before = lock(last).replace(held);
                if before != Some(held) {
                    if let Err(error) = pool.keep_hold(mode, held).await {
                        tracing::warn!(game_mode = %mode.mode, %error, "keeping the mode's hold in the pool failed");
                    }
                }
            }
            return ModeRow {
                held,
                replaced: !config.is_at(&Revision { id, version }),
            };
        }
        Ok(Err(StoreError::NotFound)) => {
            return ModeRow {
                held: false,
                replaced: true,
            }
        }
        Ok(Err(err)) => err.to_string(),
        Err(late) => late.to_string(),
    };
    tracing::warn!(game_mode = %mode.mode, %error, "reading the mode's hold failed: the last hold read stands");
    ModeRow {
        held: last_read(pool, mode, last).await,
        replaced: false,
    }
}

/// The hold this loop last read, else the pool's copy of the last one any
/// worker read (remembered), else not held.
async fn last_read(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    last: Option<&Mutex<Option<bool>>>,
) -> bool {
    if let Some(held) = last.and_then(|l| *lock(l)) {
        return held;
    }
    match pool.kept_hold(mode).await {
        Ok(Some(held)) => {
            if let Some(last) = last {
                *lock(last) = Some(held);
            }
            held
        }
        Ok(None) => false,
        Err(error) => {
            tracing::warn!(game_mode = %mode.mode, %error, "reading the pool's copy of the mode's hold failed");
            false
        }
    }
}

fn lock(m: &Mutex<Option<bool>>) -> std::sync::MutexGuard<'_, Option<bool>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Stores a cycle's figures: `last`, the mode's last cycle for the console,
/// and `figures`, merged into the minute of `now` in the stats history.
/// Failures and a database that does not answer within what is left of
/// `budget` lose them (logged), never the cycle: its claims are in the
/// outbox already.
pub(super) async fn store_figures(
    db: &DatabaseConnection,
    mode: &ModeKey,
    last: mode_cycle_stat::Model,
    now: DateTime<Utc>,
    figures: &Figures,
    budget: &Budget,
) {
    let writes = async {
        let stats = cycle_stats::put(db, last).await;
        let history = stats_history::record(db, &mode.project_id, &mode.mode, now, figures).await;
        (stats, history)
    };
    match budget
        .run("storing the cycle's figures", None, writes)
        .await
    {
        Ok((stats, history)) => {
            if let Err(err) = stats {
                tracing::warn!(game_mode = %mode.mode, error = %err, "storing the cycle's figures failed");
            }
            if let Err(err) = history {
                tracing::warn!(game_mode = %mode.mode, error = %err, "storing the minute's figures failed");
            }
        }
        Err(late) => {
            tracing::warn!(game_mode = %mode.mode, error = %late, "the cycle's figures are lost")
        }
    }
}

/// Stores the figures of an idle cycle (an empty pool) at `now`: the
/// mode's last cycle for the console, and its gauges. A database out of
/// reach or not answering within what is left of `budget` loses them
/// (logged), never the cycle.
pub(crate) async fn record_idle(
    db: &DatabaseConnection,
    mode: &ModeKey,
    now: DateTime<Utc>,
    period: Option<Duration>,
    budget: &Budget,
) {
    let last = mode_cycle_stat::Model {
        project_id: mode.project_id.clone(),
        game_mode: mode.mode.clone(),
        pool_size: 0,
        candidates: 0,
        matches: 0,
        duration_ms: 0.0,
        ran_at: now,
        pool_summary: None,
        period_seconds: period.map(|p| p.as_secs_f64()),
    };
    let stored = budget
        .try_run(
            "storing the cycle's figures",
            None,
            cycle_stats::put(db, last),
        )
        .await;
    if let Err(err) = stored {
        tracing::warn!(game_mode = %mode.mode, error = %err, "storing the cycle's figures failed");
    }
    crate::metrics::cycle(mode, Duration::ZERO, 0, 0);
    crate::metrics::waiting(mode, []);
}
