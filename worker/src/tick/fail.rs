//! Ending the searches a cycle fails (docs/game-modes.md, "Config
//! changes"; an incomplete party's timeout; a deleted mode's searches): each
//! ended as `failed` with its code, its client told.

use crate::error::WorkerError;
use futures::stream::{self, StreamExt};
use matchplane_matchmaker::FailedSearch;
use matchplane_store::pool::{EndOutcome, EndResult, ModeKey, PoolStore};
use matchplane_store::tickets::{publish, StatusMessage};

/// Ends each search of `failed` (those the config rules out, or a deleted
/// mode's) as `failed` with its code, and tells its client. Returns how
/// many this call ended.
pub(crate) async fn fail_searches(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    failed: &[FailedSearch],
    concurrency: usize,
) -> Result<usize, WorkerError> {
    Ok(fail_searches_ended(pool, mode, failed, concurrency)
        .await?
        .len())
}

/// Ends each of `failed` as `failed` with its code and tells its client;
/// returns those this call ended (a search ended meanwhile by something
/// else is left out).
///
/// # Errors
/// A pool store failure.
pub(crate) async fn fail_searches_ended<'f>(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    failed: &'f [FailedSearch],
    concurrency: usize,
) -> Result<Vec<&'f FailedSearch>, WorkerError> {
    let futures: Vec<_> = failed
        .iter()
        .map(|failed| async move {
            fail_one(pool, mode, failed)
                .await
                .map(|ended| (failed, ended))
        })
        .collect();
    let results: Vec<Result<(&FailedSearch, bool), WorkerError>> = stream::iter(futures)
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut ended = Vec::new();
    for result in results {
        let (failed, this) = result?;
        if this {
            ended.push(failed);
        }
    }
    Ok(ended)
}

async fn fail_one(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    failed: &FailedSearch,
) -> Result<bool, WorkerError> {
    let code = failed.code.as_str().to_owned();
    let end = EndOutcome::Failed {
        code: code.clone(),
        message: failed.message.clone(),
    };
    let ended = pool.end_search(mode, &failed.ticket_id, &end).await?;
    if ended == EndResult::Ended {
        crate::metrics::searches_failed([failed.code.as_str()]);
        let message = StatusMessage::Failed {
            code,
            message: failed.message.clone(),
        };
        publish(pool, &failed.ticket_id, &message).await;
        return Ok(true);
    }
    Ok(false)
}
