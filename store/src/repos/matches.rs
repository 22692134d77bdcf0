//! Matches (docs/architecture.md): written once by the worker's outbox consumer, read by
//! the matches routes (docs/api-tour.md) and the mode stats.
//!
//! Match ids are `mat_<ulid>`, so their text order is their creation order:
//! lists go newest first and page with the last id seen as the cursor.

use crate::entities::match_::{self, Entity as Matches};
use crate::repos::insert_absent::insert_absent;
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Select,
};

/// The one way into a project's matches.
pub fn scoped(project_id: &str) -> Select<Matches> {
    Matches::find().filter(match_::Column::ProjectId.eq(project_id))
}

/// Stores `rows`, leaving alone each whose match id exists (the outbox may
/// hand the same match over twice); many rows per statement. Returns how
/// many this call inserted.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn insert_if_absent<C: ConnectionTrait>(
    db: &C,
    rows: Vec<match_::Model>,
) -> Result<u64, StoreError> {
    insert_absent::<Matches, _>(db, rows, [match_::Column::Id]).await
}

/// One match of `project_id`.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such match.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
) -> Result<match_::Model, StoreError> {
    scoped(project_id)
        .filter(match_::Column::Id.eq(match_id))
        .one(db)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Every player entry of a stored `teams` value (`teams[].players[]`), in
/// order. A value of another shape yields the entries it does hold.
pub fn players_of(teams: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    teams
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|team| team.get("players")?.as_array())
        .flatten()
}

/// The player ids a match was formed with (its `teams[].players[].playerId`),
/// in no particular order. A `teams` value of another shape yields the ids
/// it does hold, so a damaged row refuses reports instead of failing them.
pub fn original_players(row: &match_::Model) -> std::collections::HashSet<String> {
    players_of(&row.teams)
        .filter_map(|player| player.get("playerId")?.as_str())
        .map(str::to_owned)
        .collect()
}

/// Up to `limit` matches of `project_id`, newest first, optionally of one
/// `game_mode`, strictly older than the match id `before` (the cursor).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn list<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: Option<&str>,
    before: Option<&str>,
    limit: u64,
) -> Result<Vec<match_::Model>, StoreError> {
    let mut query = scoped(project_id);
    if let Some(mode) = game_mode {
        query = query.filter(match_::Column::GameMode.eq(mode));
    }
    if let Some(cursor) = before {
        query = query.filter(match_::Column::Id.lt(cursor));
    }
    Ok(query
        .order_by_desc(match_::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// The statuses of a match that was made (a proposal that became one,
/// released or not): what the mode stats count as matches.
pub const MADE_STATUSES: [&str; 3] = [
    super::match_status::MADE,
    super::match_status::RELEASED,
    super::match_status::UNASSIGNED,
];

/// Matches of one mode created at or after `since`, newest first, at most
/// `limit` (for the mode stats); proposals that were not made are left
/// out.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn recent<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    since: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<match_::Model>, StoreError> {
    Ok(scoped(project_id)
        .filter(match_::Column::GameMode.eq(game_mode))
        .filter(match_::Column::CreatedAt.gte(since))
        .filter(match_::Column::Status.is_in(MADE_STATUSES))
        .order_by_desc(match_::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// How many matches of one mode were created at or after `since` (made
/// ones: see [`MADE_STATUSES`]).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn count_since<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    since: DateTime<Utc>,
) -> Result<u64, StoreError> {
    Ok(scoped(project_id)
        .filter(match_::Column::GameMode.eq(game_mode))
        .filter(match_::Column::CreatedAt.gte(since))
        .filter(match_::Column::Status.is_in(MADE_STATUSES))
        .count(db)
        .await?)
}

/// The lifecycle rows (status and answers) of one mode's matches and
/// proposals created at or after `since`, newest first, at most `limit`
/// (for the mode stats' acceptance figures).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn lifecycle_since<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    since: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<(String, Option<serde_json::Value>)>, StoreError> {
    Ok(scoped(project_id)
        .select_only()
        .columns([match_::Column::Status, match_::Column::Answers])
        .filter(match_::Column::GameMode.eq(game_mode))
        .filter(match_::Column::CreatedAt.gte(since))
        .order_by_desc(match_::Column::Id)
        .limit(limit)
        .into_tuple()
        .all(db)
        .await?)
}
