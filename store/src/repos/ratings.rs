//! Ratings of a game mode and the reports applied to them.
//!
//! A report is applied in one transaction: its `matchId` row is inserted
//! first (a second report with the same id fails on the primary key and
//! changes nothing), the players' rows are created at the initial rating if
//! new (`INSERT … ON CONFLICT DO NOTHING`, which on PostgreSQL waits for a
//! concurrent creator), then locked in player order (`FOR UPDATE` on
//! PostgreSQL; SQLite serialises writers), so concurrent reports on
//! overlapping players apply one after the other and lose no update.

use super::StoreError;
use crate::entities::{match_, rating, rating_result};
use chrono::{DateTime, Utc};
use matchplane_matchmaker::ratings::Rating;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseBackend, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, TransactionTrait,
};
use std::collections::{BTreeMap, HashMap};

/// Why a report could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError<E> {
    /// This `matchId` was already applied to the mode.
    #[error("result already reported")]
    AlreadyReported,
    /// The match is no longer `made`: it was released (or unassigned)
    /// while the report was checked, and was not played.
    #[error("the match is no longer made")]
    NotMade,
    /// The caller's rating computation refused the report.
    #[error("rating failed")]
    Rating(E),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl<E> From<sea_orm::DbErr> for ApplyError<E> {
    fn from(err: sea_orm::DbErr) -> Self {
        ApplyError::Store(err.into())
    }
}

/// The stored values of a row as a [`Rating`].
pub fn as_rating(row: &rating::Model) -> Rating {
    Rating {
        rating: row.rating,
        deviation: row.deviation,
        volatility: row.volatility,
    }
}

/// One player's row, if rated in this mode (none for a player id holding a
/// NUL: none is stored, and PostgreSQL refuses to compare text with one).
///
/// # Errors
/// A database error.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    game_mode_id: &str,
    player_id: &str,
) -> Result<Option<rating::Model>, StoreError> {
    if crate::repos::holds_nul(player_id) {
        return Ok(None);
    }
    Ok(
        rating::Entity::find_by_id((game_mode_id.to_owned(), player_id.to_owned()))
            .one(db)
            .await?,
    )
}

/// Every row of a mode, by player id.
///
/// # Errors
/// A database error.
pub async fn list<C: ConnectionTrait>(
    db: &C,
    game_mode_id: &str,
) -> Result<Vec<rating::Model>, StoreError> {
    Ok(rating::Entity::find()
        .filter(rating::Column::GameModeId.eq(game_mode_id))
        .order_by_asc(rating::Column::PlayerId)
        .all(db)
        .await?)
}

/// Sets a player's rating (an import), keeping their game count.
///
/// # Errors
/// A database error.
pub async fn put<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode_id: &str,
    player_id: &str,
    value: Rating,
    now: DateTime<Utc>,
) -> Result<rating::Model, StoreError> {
    let row = rating::ActiveModel {
        game_mode_id: Set(game_mode_id.to_owned()),
        player_id: Set(player_id.to_owned()),
        project_id: Set(project_id.to_owned()),
        rating: Set(value.rating),
        deviation: Set(value.deviation),
        volatility: Set(value.volatility),
        games: Set(0),
        rated_at: Set(now),
    };
    rating::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([rating::Column::GameModeId, rating::Column::PlayerId])
                .update_columns([
                    rating::Column::Rating,
                    rating::Column::Deviation,
                    rating::Column::Volatility,
                    rating::Column::RatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    get(db, game_mode_id, player_id)
        .await?
        .ok_or(StoreError::NotFound)
}

/// What one report touches.
#[derive(Debug, Clone, Copy)]
pub struct ReportScope<'a> {
    /// Owning project.
    pub project_id: &'a str,
    /// The game mode's row id.
    pub game_mode_id: &'a str,
    /// The report's `matchId`.
    pub match_id: &'a str,
    /// Every player of the report.
    pub players: &'a [String],
    /// The rating a player without a row starts from.
    pub initial: Rating,
    /// When the report is applied.
    pub now: DateTime<Utc>,
}

/// Applies one report: records `match_id` (which must still be `made`),
/// makes sure every player in `players` has a row (at `initial` if new),
/// locks them, hands their rows to `compute` and stores what it returns
/// (games +1, `rated_at = now`). Returns the updated rows.
///
/// # Errors
/// [`ApplyError::AlreadyReported`] when `match_id` was applied before;
/// [`ApplyError::NotMade`] when the match is no longer `made`;
/// [`ApplyError::Rating`] with `compute`'s error (nothing is stored);
/// [`ApplyError::Store`] for a database failure.
pub async fn apply_report<C, E, F>(
    db: &C,
    scope: ReportScope<'_>,
    compute: F,
) -> Result<Vec<rating::Model>, ApplyError<E>>
where
    C: TransactionTrait,
    F: FnOnce(&HashMap<String, rating::Model>) -> Result<BTreeMap<String, Rating>, E>,
{
    let ReportScope {
        project_id,
        game_mode_id,
        match_id,
        players,
        initial,
        now,
    } = scope;
    let txn = db.begin().await?;
    let recorded = rating_result::Entity::insert(rating_result::ActiveModel {
        game_mode_id: Set(game_mode_id.to_owned()),
        match_id: Set(match_id.to_owned()),
        project_id: Set(project_id.to_owned()),
        created_at: Set(now),
    })
    .exec_without_returning(&txn)
    .await;
    match recorded.map_err(StoreError::from) {
        Ok(_) => {}
        Err(StoreError::Conflict) => return Err(ApplyError::AlreadyReported),
        Err(other) => return Err(other.into()),
    }
    // The match still made, under its row's lock until the report commits:
    // a release racing it either finds the report and stands back, or
    // released it first and this report is refused
    // ([`super::match_status::release`]).
    let marked = match_::Entity::update_many()
        .col_expr(
            match_::Column::Status,
            Expr::col(match_::Column::Status).into(),
        )
        .filter(match_::Column::ProjectId.eq(project_id))
        .filter(match_::Column::Id.eq(match_id))
        .filter(match_::Column::Status.eq(super::match_status::MADE))
        .exec(&txn)
        .await?;
    if marked.rows_affected != 1 {
        return Err(ApplyError::NotMade);
    }

    let mut sorted: Vec<&String> = players.iter().collect();
    sorted.sort();
    sorted.dedup();
    let fresh = sorted.iter().map(|p| rating::ActiveModel {
        game_mode_id: Set(game_mode_id.to_owned()),
        player_id: Set((*p).clone()),
        project_id: Set(project_id.to_owned()),
        rating: Set(initial.rating),
        deviation: Set(initial.deviation),
        volatility: Set(initial.volatility),
        games: Set(0),
        rated_at: Set(now),
    });
    rating::Entity::insert_many(fresh)
        .on_conflict(
            OnConflict::columns([rating::Column::GameModeId, rating::Column::PlayerId])
                .do_nothing()
                .to_owned(),
        )
        .do_nothing()
        .exec_without_returning(&txn)
        .await?;

    let mut query = rating::Entity::find()
        .filter(rating::Column::GameModeId.eq(game_mode_id))
        .filter(rating::Column::PlayerId.is_in(sorted.iter().map(|p| p.as_str())))
        .order_by_asc(rating::Column::PlayerId);
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        query = query.lock_exclusive();
    }
    let rows: HashMap<String, rating::Model> = query
        .all(&txn)
        .await?
        .into_iter()
        .map(|r| (r.player_id.clone(), r))
        .collect();

    let updated = compute(&rows).map_err(ApplyError::Rating)?;
    let mut out = Vec::with_capacity(updated.len());
    for (player, value) in updated {
        let Some(row) = rows.get(&player) else {
            continue;
        };
        let active = rating::ActiveModel {
            game_mode_id: Set(row.game_mode_id.clone()),
            player_id: Set(row.player_id.clone()),
            project_id: Set(row.project_id.clone()),
            rating: Set(value.rating),
            deviation: Set(value.deviation),
            volatility: Set(value.volatility),
            games: Set(row.games + 1),
            rated_at: Set(now),
        };
        out.push(rating::Entity::update(active).exec(&txn).await?);
    }
    txn.commit().await?;
    Ok(out)
}
