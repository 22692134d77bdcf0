//! Ending a mode that was disabled or deleted (docs/acceptance.md, 'How a
//! proposal ends'; docs/game-modes.md): every open proposal is cancelled, every search,
//! proposed or waiting, ends `failed` `GAME_MODE_DISABLED`, nobody is
//! cooled down, and each client is told. The API runs it at a delete (so a
//! mode created again under the name starts empty, its cooldowns
//! forgotten too), the worker's cycle at
//! a disable, the worker's sweep for whatever a stale replica added after.

use super::proposal_status::announce_settled;
use super::status::{publish, StatusMessage};
use crate::pool::{withdraw, EndOutcome, EndResult, ModeKey, PoolError, PoolStore};
use futures::stream::{self, StreamExt};

/// Proposals read per round.
const PROPOSALS_PER_ROUND: usize = 500;

/// Cancels every open proposal of `mode` with `GAME_MODE_DISABLED` for each
/// member still searching and no cooldown, and tells their clients; returns
/// how many proposals this call closed.
///
/// # Errors
/// A pool store failure (what was closed stays closed).
pub async fn withdraw_proposals(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    now: f64,
) -> Result<usize, PoolError> {
    let mut closed = 0;
    loop {
        let ids = pool
            .open_proposals(mode, f64::INFINITY, PROPOSALS_PER_ROUND)
            .await?;
        let mut progressed = false;
        for id in &ids {
            if let Some(settled) = withdraw(pool, mode, id, now).await? {
                announce_settled(pool, &settled).await;
                closed += 1;
                progressed = true;
            }
        }
        if ids.len() < PROPOSALS_PER_ROUND || !progressed {
            return Ok(closed);
        }
    }
}

/// Ends `mode` as a whole (it was deleted): [`withdraw_proposals`], its
/// decline cooldowns forgotten, then every search of its pool fails `GAME_MODE_DISABLED` with `message`, `concurrency` store
/// calls at a time. Returns how many waiting searches it ended (the
/// proposed ones end with their proposal).
///
/// # Errors
/// A pool store failure (what was ended stays ended).
pub async fn end_mode(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    message: &str,
    now: f64,
    concurrency: usize,
) -> Result<usize, PoolError> {
    withdraw_proposals(pool, mode, now).await?;
    pool.forget_cooldowns(mode).await?;
    let code = matchplane_matchmaker::Code::GameModeDisabled.as_str();
    let outcome = EndOutcome::Failed {
        code: code.to_owned(),
        message: message.to_owned(),
    };
    let told = StatusMessage::Failed {
        code: code.to_owned(),
        message: message.to_owned(),
    };
    let live = pool.snapshot(mode).await?;
    let results: Vec<Result<bool, PoolError>> = stream::iter(live)
        .map(|search| {
            let (outcome, told) = (&outcome, &told);
            async move {
                let ended = pool.end_search(mode, &search.ticket_id, outcome).await?;
                if ended == EndResult::Ended {
                    publish(pool, &search.ticket_id, told).await;
                }
                Ok(ended == EndResult::Ended)
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut ended = 0;
    for result in results {
        if result? {
            ended += 1;
        }
    }
    Ok(ended)
}
