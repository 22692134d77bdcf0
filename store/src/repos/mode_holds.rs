//! A game mode's hold (docs/game-modes.md, "Holding matching"): the
//! `held_at` and `held_by` columns of its row. Live state, not config: a
//! hold or its release changes neither the mode's version nor its
//! `updated_at`, and is not in its history.

use crate::entities::game_mode::{self, Entity as GameModes};
use crate::repos::{holds_nul, StoreError};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

/// A mode's hold: since when, and who set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// When the hold was set (the first `POST …/hold` of a held streak).
    pub since: DateTime<Utc>,
    /// Who set it: the API key's id (`key_…`), or `operator`.
    pub by: String,
}

impl Hold {
    /// The hold of a mode row, `None` when it is not held.
    pub fn of(row: &game_mode::Model) -> Option<Hold> {
        row.held_at.map(|since| Hold {
            since,
            by: row.held_by.clone().unwrap_or_default(),
        })
    }
}

/// Holds mode `name` of `project_id` at `now`, set by `by`. Idempotent: a
/// mode held already keeps its first `since` and `by`. Returns the hold in
/// force.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode.
pub async fn hold<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    by: &str,
    now: DateTime<Utc>,
) -> Result<Hold, StoreError> {
    if holds_nul(name) {
        return Err(StoreError::NotFound);
    }
    GameModes::update_many()
        .col_expr(game_mode::Column::HeldAt, Some(now).into())
        .col_expr(game_mode::Column::HeldBy, Some(by.to_owned()).into())
        .filter(game_mode::Column::ProjectId.eq(project_id))
        .filter(game_mode::Column::Name.eq(name))
        .filter(game_mode::Column::HeldAt.is_null())
        .exec(db)
        .await?;
    get(db, project_id, name)
        .await?
        .2
        .ok_or(StoreError::NotFound)
}

/// Clears the hold of mode `name` of `project_id`; a mode not held stays
/// as it is.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode.
pub async fn release<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
) -> Result<(), StoreError> {
    if holds_nul(name) {
        return Err(StoreError::NotFound);
    }
    let result = GameModes::update_many()
        .col_expr(
            game_mode::Column::HeldAt,
            Option::<DateTime<Utc>>::None.into(),
        )
        .col_expr(game_mode::Column::HeldBy, Option::<String>::None.into())
        .filter(game_mode::Column::ProjectId.eq(project_id))
        .filter(game_mode::Column::Name.eq(name))
        .exec(db)
        .await?;
    if result.rows_affected == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// A mode row's id, version, `held_at` and `held_by`.
type HoldRow = (String, i64, Option<DateTime<Utc>>, Option<String>);

/// The current row id (`gm_…`), version and hold of mode `name` of
/// `project_id` (one small read of its row's four columns, what the worker
/// does at every cycle): the hold is `None` when it is not held. A mode
/// deleted and created again under its name has another id.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
) -> Result<(String, i64, Option<Hold>), StoreError> {
    if holds_nul(name) {
        return Err(StoreError::NotFound);
    }
    let row: Option<HoldRow> = GameModes::find()
        .select_only()
        .column(game_mode::Column::Id)
        .column(game_mode::Column::Version)
        .column(game_mode::Column::HeldAt)
        .column(game_mode::Column::HeldBy)
        .filter(game_mode::Column::ProjectId.eq(project_id))
        .filter(game_mode::Column::Name.eq(name))
        .into_tuple()
        .one(db)
        .await?;
    let (id, version, held_at, held_by) = row.ok_or(StoreError::NotFound)?;
    let hold = held_at.map(|since| Hold {
        since,
        by: held_by.unwrap_or_default(),
    });
    Ok((id, version, hold))
}
