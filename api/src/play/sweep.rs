//! Ends overdue searches (a ticket that expired, a REST search not polled)
//! of the modes this process started searches in, and tells their clients.
//! The worker sweeps too, each cycle; both use the pool store's atomic
//! `expire_due`, so a search expires once. Each sweep also fails the
//! searches of projects and modes deleted here lately ([`super::retire`]).

use super::{status::publish, unix_now, Play};
use matchplane_store::tickets::StatusMessage;
use sea_orm::DatabaseConnection;
use std::future::Future;
use std::time::Duration;

/// How many searches of one mode one sweep ends at most.
const SWEEP_BATCH: usize = 1000;
/// A mode with no search started here for this long is no longer swept here.
const FORGET_MODE_AFTER: Duration = Duration::from_secs(2 * 3600);

/// One sweep at `now` (Unix seconds); returns how many searches expired.
pub async fn sweep_once(play: &Play, db: &DatabaseConnection, now: f64) -> usize {
    super::retire::sweep(play, db).await;
    let mut expired = 0;
    for mode in play.seen_modes(FORGET_MODE_AFTER) {
        match play.pool.expire_due(&mode, now, SWEEP_BATCH).await {
            Ok(tickets) => {
                for ticket_id in &tickets {
                    publish(play, ticket_id, &StatusMessage::Expired { reason: None }).await;
                }
                expired += tickets.len();
            }
            Err(error) => {
                tracing::warn!(%error, project_id = %mode.project_id, game_mode = %mode.mode, "expiry sweep failed");
            }
        }
    }
    expired
}

/// Sweeps every `sweep_interval` until `shutdown` completes.
pub async fn run(
    play: std::sync::Arc<Play>,
    db: DatabaseConnection,
    shutdown: impl Future<Output = ()>,
) {
    let mut tick = tokio::time::interval(play.settings.sweep_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            _ = tick.tick() => {
                sweep_once(&play, &db, unix_now()).await;
            }
        }
    }
}
