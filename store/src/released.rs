//! What a released match ends beside its tickets (docs/acceptance.md,
//! "Releasing a match"; docs/backfill.md): its open backfill request, so
//! that no fill seats a newcomer, or one of its own requeued players, in a
//! match that is no longer played. Shared by the studio's release (API)
//! and the assignment timeout (worker); a mode's delete closes every open
//! request of the mode the same way, and releases the matches waiting for
//! their assignment.

use crate::pool::{BackfillChange, ModeKey, PoolError, PoolStore};
use crate::repos::backfills::{self, OPEN};
use crate::repos::match_status::{self, ReleaseOutcome, RELEASED};
use crate::repos::StoreError;
use crate::tickets::{publish, StatusMessage};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, QueryFilter};

/// Releases match `match_id` of `mode` as `status` (`released` or
/// `unassigned`) if it is made and was made within `window`
/// ([`match_status::release`]); once released (by this call, or as the
/// same release before), its open backfill request closes and its
/// tickets are freed to search again, each told `told`. A retry after a
/// failure finishes what was left.
///
/// # Errors
/// A database or pool store failure.
pub async fn release_match<E: From<StoreError> + From<PoolError>>(
    db: &DatabaseConnection,
    pool: &dyn PoolStore,
    mode: &ModeKey,
    match_id: &str,
    (status, told): (&str, &StatusMessage),
    window: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<ReleaseOutcome, E> {
    let outcome =
        match_status::release(db, &mode.project_id, match_id, status, window, now).await?;
    let (ReleaseOutcome::Released(row) | ReleaseOutcome::Already(row)) = &outcome else {
        return Ok(outcome);
    };
    // Its backfill first: no fill may seat anyone (its own players, who
    // may search again below, least of all) in a match no longer played.
    close_backfill::<E>(db, pool, mode, match_id, now).await?;
    let seated = backfills::seated_at(db, &mode.project_id, match_id).await?;
    let tickets = match_status::released_tickets(row, &seated);
    let now_secs = now.timestamp_micros() as f64 / 1e6;
    let freed = pool
        .release_tickets(mode, match_id, &tickets, now_secs)
        .await?;
    for ticket in &freed {
        publish(pool, ticket, told).await;
    }
    Ok(outcome)
}

/// Releases (`released`) every made match of `mode`, created at
/// `mode_created_at`, still waiting for its assignment, made within the
/// last day: the mode is deleted, and nobody will assign them
/// (docs/game-modes.md, on a deleted mode). An earlier mode's matches of
/// the same name are not its own, and are left as they are. Their players
/// are told `released`; a socket that waited closes, its search unable to
/// start again in a deleted mode. Call only for a mode with an
/// `assignment` block: in another every made match is played, not waiting.
/// Returns how many it released.
///
/// # Errors
/// A database or pool store failure.
pub async fn release_waiting_matches<E: From<StoreError> + From<PoolError>>(
    db: &DatabaseConnection,
    pool: &dyn PoolStore,
    (mode, mode_created_at): (&ModeKey, DateTime<Utc>),
    now: DateTime<Utc>,
) -> Result<usize, E> {
    const BATCH: u64 = 500;
    let since = (now - chrono::Duration::days(1)).max(mode_created_at);
    let mut released = 0;
    // Each batch's matches leave `made`; a bound all the same.
    for _ in 0..100 {
        let waiting =
            // The mode's results went with it: none to leave out.
            match_status::unassigned_due(db, &mode.project_id, (&mode.mode, None), now, since, BATCH)
                .await?;
        let last = (waiting.len() as u64) < BATCH;
        for row in waiting {
            let told = (RELEASED, &StatusMessage::Released);
            let window = chrono::Duration::days(2);
            if let ReleaseOutcome::Released(_) =
                release_match::<E>(db, pool, mode, &row.id, told, window, now).await?
            {
                released += 1;
            }
        }
        if last {
            break;
        }
    }
    Ok(released)
}

/// Closes the open backfill request of the released match `match_id`, if
/// it has one: first in the pool store (in one step with respect to
/// fills, as a studio's close), then its row (`closed`). A retry after a
/// failure between the two finishes it.
///
/// # Errors
/// A database or pool store failure.
pub async fn close_backfill<E: From<StoreError> + From<PoolError>>(
    db: &DatabaseConnection,
    pool: &dyn PoolStore,
    mode: &ModeKey,
    match_id: &str,
    now: DateTime<Utc>,
) -> Result<(), E> {
    let open = crate::entities::backfill::Column::MatchId.eq(match_id);
    close_where::<E>(db, pool, mode, open, now).await
}

/// Closes every open backfill request of `mode`, as
/// [`close_backfill`] closes one: the mode is deleted, and a mode created
/// again under its name is a new mode that must not fill its matches
/// (docs/game-modes.md, on a deleted mode).
///
/// # Errors
/// A database or pool store failure.
pub async fn close_mode_backfills<E: From<StoreError> + From<PoolError>>(
    db: &DatabaseConnection,
    pool: &dyn PoolStore,
    mode: &ModeKey,
    now: DateTime<Utc>,
) -> Result<(), E> {
    let open = crate::entities::backfill::Column::GameMode.eq(mode.mode.as_str());
    close_where::<E>(db, pool, mode, open, now).await
}

async fn close_where<E: From<StoreError> + From<PoolError>>(
    db: &DatabaseConnection,
    pool: &dyn PoolStore,
    mode: &ModeKey,
    which: sea_orm::sea_query::SimpleExpr,
    now: DateTime<Utc>,
) -> Result<(), E> {
    let open = backfills::scoped(&mode.project_id)
        .filter(which)
        .filter(crate::entities::backfill::Column::Status.eq(OPEN))
        .filter(crate::entities::backfill::Column::ExpiresAt.gt(now))
        .all(db)
        .await
        .map_err(StoreError::from)?;
    for row in open {
        match pool.close_backfill(mode, &row.id).await? {
            BackfillChange::Changed { .. } | BackfillChange::Unknown => {
                backfills::end(db, &mode.project_id, &row.id, backfills::CLOSED, now).await?;
            }
            // Filled or closed in the pool store first: the fill (or the
            // close) writes its own row.
            BackfillChange::NotOpen(_) => {}
        }
    }
    Ok(())
}
