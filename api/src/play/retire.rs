//! Searches of a deleted project or game mode (SPEC 3: a deleted mode fails
//! all its searches with `GAME_MODE_DISABLED`; nobody is left waiting).
//!
//! The delete handlers end them at once, each as `failed` with
//! `GAME_MODE_DISABLED`, and tell each client; the project's live count goes
//! back down with each one. No worker runs a deleted project's modes, so
//! without this its searches would stay in the pool for good.
//!
//! A search may still start just after the delete, on a replica whose
//! config cache ([`super::cache::CONFIG_CACHE_TTL`]) has not seen it yet.
//! The deleted project or mode is therefore remembered for [`WATCH_FOR`],
//! and the sweeper ([`super::sweep`]) fails its searches again each sweep,
//! unless a mode of that name exists again (created anew, on any replica):
//! then it is forgotten, and the new mode's searches are left alone.

use super::{status::publish, Play};
use matchplane_store::pool::{EndOutcome, EndResult, ModeKey, PoolError};
use matchplane_store::repos::{game_modes, StoreError};
use matchplane_store::tickets::StatusMessage;
use sea_orm::DatabaseConnection;
use std::time::{Duration, Instant};

/// The SPEC code of a search ended because its mode or project is gone.
pub const CODE: &str = "GAME_MODE_DISABLED";

/// How long a deleted project or mode is still swept: well over the config
/// cache's time to live, so a start accepted from a stale cache is caught.
pub const WATCH_FOR: Duration = Duration::from_secs(10);

/// Rounds of snapshot-and-end per mode and call (a start racing the end is
/// caught by the next round).
const ROUNDS: usize = 3;

/// What was deleted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Retired {
    /// A whole project: every mode it has searches in.
    Project(String),
    /// One game mode.
    Mode(ModeKey),
}

impl Retired {
    fn message(&self) -> &'static str {
        match self {
            Retired::Project(_) => "the project was deleted",
            Retired::Mode(_) => "the game mode was deleted",
        }
    }
}

/// Ends every live search of what was deleted as `failed`
/// (`GAME_MODE_DISABLED`), tells each client, and remembers it for the
/// sweeper for [`WATCH_FOR`]. Returns how many searches this call ended.
///
/// # Errors
/// A pool store failure; the sweeper tries again while it remembers it.
pub async fn retire(play: &Play, what: Retired) -> Result<usize, PoolError> {
    play.retired_now(what.clone(), Instant::now() + WATCH_FOR);
    fail_all(play, &what).await
}

/// One sweep of what was deleted lately (forgetting what is past its
/// watch, and a mode created again since). Returns how many searches it
/// ended.
pub async fn sweep(play: &Play, db: &DatabaseConnection) -> usize {
    let mut ended = 0;
    for what in play.retired_list(Instant::now()) {
        if let Retired::Mode(mode) = &what {
            match game_modes::get(db, &mode.project_id, &mode.mode).await {
                Err(StoreError::NotFound) => {}
                Ok(_) => {
                    play.forget_retired(&what);
                    continue;
                }
                Err(error) => {
                    tracing::warn!(%error, ?what, "is the deleted mode back? not known; retrying");
                    continue;
                }
            }
        }
        match fail_all(play, &what).await {
            Ok(n) => ended += n,
            Err(error) => tracing::warn!(%error, ?what, "failing a deleted mode's searches failed"),
        }
    }
    ended
}

async fn fail_all(play: &Play, what: &Retired) -> Result<usize, PoolError> {
    let modes = match what {
        Retired::Mode(mode) => vec![mode.clone()],
        Retired::Project(project_id) => play
            .pool
            .modes_with_searches(project_id)
            .await?
            .into_iter()
            .map(|name| ModeKey::new(project_id.clone(), name))
            .collect(),
    };
    let mut ended = 0;
    for mode in &modes {
        ended += fail_mode(play, mode, what.message()).await?;
    }
    if ended > 0 {
        tracing::info!(?what, ended, "searches of a deleted game mode failed");
    }
    Ok(ended)
}

async fn fail_mode(play: &Play, mode: &ModeKey, message: &str) -> Result<usize, PoolError> {
    let outcome = EndOutcome::Failed {
        code: CODE.to_owned(),
        message: message.to_owned(),
    };
    let status = StatusMessage::Failed {
        code: CODE.to_owned(),
        message: message.to_owned(),
    };
    let mut ended = 0;
    for _ in 0..ROUNDS {
        let live = play.pool.snapshot(mode).await?;
        if live.is_empty() {
            break;
        }
        for search in &live {
            let ticket_id: &str = &search.ticket_id;
            if play.pool.end_search(mode, ticket_id, &outcome).await? == EndResult::Ended {
                publish(play, ticket_id, &status).await;
                ended += 1;
            }
        }
    }
    Ok(ended)
}
