//! What a released match ends beside its tickets (docs/acceptance.md,
//! "Releasing a match"; docs/backfill.md): its open backfill request, so
//! that no fill seats a newcomer, or one of its own requeued players, in a
//! match that is no longer played. Shared by the studio's release (API)
//! and the assignment timeout (worker).

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
    let open = backfills::scoped(&mode.project_id)
        .filter(crate::entities::backfill::Column::MatchId.eq(match_id))
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
