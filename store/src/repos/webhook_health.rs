//! The delivery health of each game mode's webhook: one row per mode,
//! written after every attempt. A failed attempt counts one more failure in
//! a row (the first one sets `failing_since`); a successful one sets the
//! count back to 0 and clears `failing_since`, keeping the last error for
//! reference. Both are single upserts, so concurrent attempts of one mode
//! never lose a count.

use crate::entities::webhook_health::{self, Entity as Health};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

/// The one way into a project's rows.
fn scoped(project_id: &str) -> sea_orm::Select<Health> {
    Health::find().filter(webhook_health::Column::ProjectId.eq(project_id))
}

fn keys() -> [webhook_health::Column; 2] {
    [
        webhook_health::Column::ProjectId,
        webhook_health::Column::GameMode,
    ]
}

/// Records a failed attempt of mode `game_mode`'s webhook at `at`, with
/// `error` (an HTTP status or an error naming no URL).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn record_failure<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    at: DateTime<Utc>,
    error: &str,
) -> Result<(), StoreError> {
    let row = webhook_health::Model {
        project_id: project_id.to_owned(),
        game_mode: game_mode.to_owned(),
        consecutive_failures: 1,
        failing_since: Some(at),
        last_error: Some(error.to_owned()),
        last_failure_at: Some(at),
        last_success_at: None,
        updated_at: at,
    };
    let active: webhook_health::ActiveModel = row.into();
    Health::insert(active)
        .on_conflict(
            OnConflict::columns(keys())
                .update_columns([
                    webhook_health::Column::LastError,
                    webhook_health::Column::LastFailureAt,
                    webhook_health::Column::UpdatedAt,
                ])
                .value(
                    webhook_health::Column::ConsecutiveFailures,
                    Expr::cust("webhook_health.consecutive_failures + 1"),
                )
                .value(
                    webhook_health::Column::FailingSince,
                    Expr::cust("COALESCE(webhook_health.failing_since, excluded.failing_since)"),
                )
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// Records a successful attempt of mode `game_mode`'s webhook at `at`: the
/// mode is no longer failing.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn record_success<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let row = webhook_health::Model {
        project_id: project_id.to_owned(),
        game_mode: game_mode.to_owned(),
        consecutive_failures: 0,
        failing_since: None,
        last_error: None,
        last_failure_at: None,
        last_success_at: Some(at),
        updated_at: at,
    };
    let active: webhook_health::ActiveModel = row.into();
    Health::insert(active)
        .on_conflict(
            OnConflict::columns(keys())
                .update_columns([
                    webhook_health::Column::ConsecutiveFailures,
                    webhook_health::Column::FailingSince,
                    webhook_health::Column::LastSuccessAt,
                    webhook_health::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The health of mode `game_mode`'s webhook; `None` before its first attempt.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
) -> Result<Option<webhook_health::Model>, StoreError> {
    Ok(scoped(project_id)
        .filter(webhook_health::Column::GameMode.eq(game_mode))
        .one(db)
        .await?)
}

/// The health of every mode of project `project_id` whose webhook was
/// tried (one row per mode; modes never tried have none).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn of_project<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
) -> Result<Vec<webhook_health::Model>, StoreError> {
    Ok(scoped(project_id).all(db).await?)
}

/// Forgets mode `game_mode`'s health (the mode is deleted: a new mode of
/// that name starts healthy).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn forget<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
) -> Result<(), StoreError> {
    Health::delete_many()
        .filter(webhook_health::Column::ProjectId.eq(project_id))
        .filter(webhook_health::Column::GameMode.eq(game_mode))
        .exec(db)
        .await?;
    Ok(())
}
