//! Matches (docs/architecture.md): written once by the worker's outbox consumer, read by
//! the matches routes (docs/api-tour.md) and the mode stats.
//!
//! Match ids are `mat_<ulid>`, so their text order is their creation order:
//! lists go newest first and page with the last id seen as the cursor
//! ([`Cursor`], docs/openapi.md, "Lists").

use crate::entities::game_mode;
use crate::entities::match_::{self, Entity as Matches};
use crate::repos::insert_absent::insert_absent;
use crate::repos::{game_modes, StoreError};
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

/// Whether a mode created at `mode_created_at` is the mode of a row of its
/// name stamped `at` (a match made then, a `webhook.test` sent then): not
/// when the mode was created after it. That row's mode was deleted and this
/// is a new mode of the same name, which neither sends, backfills, assigns
/// nor rates the deleted one's matches (docs/game-modes.md, "Changing a
/// mode").
pub fn is_own_mode(mode_created_at: DateTime<Utc>, at: DateTime<Utc>) -> bool {
    mode_created_at <= at
}

/// The mode match `row` was made in, as it is now: `None` when it was
/// deleted, also once a mode of the same name was created again
/// ([`is_own_mode`]).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn own_mode<C: ConnectionTrait>(
    db: &C,
    row: &match_::Model,
) -> Result<Option<game_mode::Model>, StoreError> {
    match game_modes::get(db, &row.project_id, &row.game_mode).await {
        Ok(mode) if is_own_mode(mode.created_at, row.created_at) => Ok(Some(mode)),
        Ok(_) | Err(StoreError::NotFound) => Ok(None),
        Err(err) => Err(err),
    }
}

/// When match `match_id` of `project_id` was made (`created_at`); `None`
/// when the project has no such match.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn created_at<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(scoped(project_id)
        .select_only()
        .column(match_::Column::CreatedAt)
        .filter(match_::Column::Id.eq(match_id))
        .into_tuple::<DateTime<Utc>>()
        .one(db)
        .await?)
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

/// A page cursor of the matches list: the id of the last match of the
/// previous page (its `nextCursor`, docs/openapi.md, "Lists"), exactly
/// `mat_` and a ULID as matchplane writes one (26 upper-case Crockford
/// base-32 characters). Anything else is refused rather than compared as
/// text: `mat_bogus` sorts before every id and would answer page 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor(String);

/// Why a text is not a [`Cursor`] of the matches list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a cursor of the matches list (`mat_` and a ULID)")]
pub struct NotACursor;

impl Cursor {
    /// The cursor `text` names.
    ///
    /// # Errors
    /// [`NotACursor`] unless `text` is `mat_` followed by a ULID written
    /// as matchplane writes it (a lower-case or out-of-range one would not
    /// sort as the ids do).
    pub fn parse(text: &str) -> Result<Self, NotACursor> {
        let rest = text.strip_prefix("mat_").ok_or(NotACursor)?;
        match ulid::Ulid::from_string(rest) {
            Ok(id) if id.to_string() == rest => Ok(Self(text.to_owned())),
            _ => Err(NotACursor),
        }
    }

    /// The match id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
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
    before: Option<&Cursor>,
    limit: u64,
) -> Result<Vec<match_::Model>, StoreError> {
    let mut query = scoped(project_id);
    if let Some(mode) = game_mode {
        query = query.filter(match_::Column::GameMode.eq(mode));
    }
    if let Some(cursor) = before {
        query = query.filter(match_::Column::Id.lt(cursor.as_str()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_mat_and_a_ulid_as_written() {
        let id = format!("mat_{}", ulid::Ulid::new());
        assert_eq!(
            Cursor::parse(&id).map(|c| c.as_str().to_owned()),
            Ok(id.clone())
        );
        for junk in [
            "garbage",
            "mat_",
            "mat_bogus",
            "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z",
            "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z00",
            "mat_01jdz8m9x2k7p3r5t8v1w4y6z0",
            "mat_ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "mat_01JDZ8M9X2K7P3R5T8V1W4Y6ZU",
            "gm_01JDZ8M9X2K7P3R5T8V1W4Y6Z0",
        ] {
            assert_eq!(Cursor::parse(junk), Err(NotACursor), "{junk}");
        }
        assert!(Cursor::parse(&id.to_lowercase()).is_err());
    }
}
