//! What a released match ends beside its tickets (docs/acceptance.md,
//! "Releasing a match"; docs/backfill.md): its open backfill request, so
//! that no fill seats a newcomer, or one of its own requeued players, in a
//! match that is no longer played. Shared by the studio's release (API)
//! and the assignment timeout (worker); a mode's delete closes every open
//! request of the mode the same way.

use crate::pool::{BackfillChange, ModeKey, PoolError, PoolStore};
use crate::repos::backfills::{self, OPEN};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, QueryFilter};

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
