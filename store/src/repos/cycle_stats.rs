//! The last cycle's figures of each game mode (docs/api-tour.md stats), one row per
//! mode, replaced by the worker after each cycle.

use crate::entities::mode_cycle_stat::{self, Entity as CycleStats};
use crate::repos::StoreError;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

/// Replaces the figures of `row`'s mode.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn put<C: ConnectionTrait>(
    db: &C,
    row: mode_cycle_stat::Model,
) -> Result<(), StoreError> {
    let active: mode_cycle_stat::ActiveModel = row.into();
    CycleStats::insert(active)
        .on_conflict(
            OnConflict::columns([
                mode_cycle_stat::Column::ProjectId,
                mode_cycle_stat::Column::GameMode,
            ])
            .update_columns([
                mode_cycle_stat::Column::PoolSize,
                mode_cycle_stat::Column::Candidates,
                mode_cycle_stat::Column::Matches,
                mode_cycle_stat::Column::DurationMs,
                mode_cycle_stat::Column::RanAt,
                mode_cycle_stat::Column::PoolSummary,
                mode_cycle_stat::Column::PeriodSeconds,
            ])
            .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The last figures of mode `game_mode` of `project_id`, if a cycle ran.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
) -> Result<Option<mode_cycle_stat::Model>, StoreError> {
    Ok(CycleStats::find()
        .filter(mode_cycle_stat::Column::ProjectId.eq(project_id))
        .filter(mode_cycle_stat::Column::GameMode.eq(game_mode))
        .one(db)
        .await?)
}

/// Forgets mode `game_mode`'s last figures (the mode is deleted: a mode
/// created again under its name is a new mode).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn forget<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
) -> Result<(), StoreError> {
    CycleStats::delete_many()
        .filter(mode_cycle_stat::Column::ProjectId.eq(project_id))
        .filter(mode_cycle_stat::Column::GameMode.eq(game_mode))
        .exec(db)
        .await?;
    Ok(())
}
