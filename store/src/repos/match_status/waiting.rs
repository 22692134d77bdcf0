//! The made matches waiting for their assignment (docs/acceptance.md,
//! "Telling the players where to play"), and whether a match's result was
//! reported: a reported match was played, so it neither waits for an
//! assignment nor is released ([`super::release`]).

use super::{made_at, MADE};
use crate::entities::match_::{self, Entity as Matches};
use crate::entities::rating_result;
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

/// Whether match `match_id`'s result was reported in the mode `rated_in`
/// (the `game_modes` row id of the match's own mode: a report is applied
/// there only, docs/ratings.md).
pub(super) async fn reported<C: ConnectionTrait>(
    db: &C,
    rated_in: &str,
    match_id: &str,
) -> Result<bool, StoreError> {
    use sea_orm::PaginatorTrait;
    Ok(rating_result::Entity::find()
        .filter(rating_result::Column::GameModeId.eq(rated_in))
        .filter(rating_result::Column::MatchId.eq(match_id))
        .count(db)
        .await?
        > 0)
}

/// Leaves out the matches whose result was reported in the mode
/// `rated_in` (a played match waits for no assignment).
fn not_reported(rated_in: &str) -> sea_orm::sea_query::SimpleExpr {
    use sea_orm::sea_query::Query;
    Expr::exists(
        Query::select()
            .expr(Expr::val(1))
            .from(rating_result::Entity)
            .and_where(
                Expr::col((rating_result::Entity, rating_result::Column::GameModeId)).eq(rated_in),
            )
            .and_where(
                Expr::col((rating_result::Entity, rating_result::Column::MatchId))
                    .equals((Matches, match_::Column::Id)),
            )
            .to_owned(),
    )
    .not()
}

/// Made matches of mode `game_mode` still without an assignment that were
/// made at or before `due` (their wait is over), oldest first, at most
/// `limit`; only those created after `since` are looked at (the wait is
/// at most ten minutes, so older ones were settled long ago). With
/// `rated_in` (the mode's row id), not those whose result was reported
/// there: a played match waits for nothing.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn unassigned_due<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    (game_mode, rated_in): (&str, Option<&str>),
    due: DateTime<Utc>,
    since: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<match_::Model>, StoreError> {
    use sea_orm::{QueryOrder, QuerySelect};
    let mut query = crate::repos::matches::scoped(project_id);
    if let Some(rated_in) = rated_in {
        query = query.filter(not_reported(rated_in));
    }
    let rows = query
        .filter(match_::Column::GameMode.eq(game_mode))
        .filter(match_::Column::Status.eq(MADE))
        .filter(match_::Column::Assignment.is_null())
        .filter(match_::Column::CreatedAt.gte(since))
        .filter(match_::Column::CreatedAt.lte(due))
        .order_by_asc(match_::Column::Id)
        .limit(limit)
        .all(db)
        .await?;
    Ok(rows.into_iter().filter(|row| made_at(row) <= due).collect())
}

/// When the earliest made match of mode `game_mode` still without an
/// assignment was made (its `made_at`, or `created_at` without a
/// proposal), among those created after `since`, leaving out those whose
/// result was reported in `rated_in` (as [`unassigned_due`]); `None` when
/// none waits. The worker's idle mode sleeps until that match's wait is
/// over (docs/acceptance.md, "Telling the players where to play").
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn first_unassigned_made_at<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    (game_mode, rated_in): (&str, Option<&str>),
    since: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    use sea_orm::{QueryOrder, QuerySelect};
    let waiting = || {
        let mut query = crate::repos::matches::scoped(project_id);
        if let Some(rated_in) = rated_in {
            query = query.filter(not_reported(rated_in));
        }
        query
            .filter(match_::Column::GameMode.eq(game_mode))
            .filter(match_::Column::Status.eq(MADE))
            .filter(match_::Column::Assignment.is_null())
            .filter(match_::Column::CreatedAt.gte(since))
    };
    // Two ordered reads (a proposal's row has `made_at`, a direct match's
    // only `created_at`) rather than one over a coalesce no index serves.
    let proposed = waiting()
        .filter(match_::Column::MadeAt.is_not_null())
        .order_by_asc(match_::Column::MadeAt)
        .limit(1)
        .one(db)
        .await?;
    let direct = waiting()
        .filter(match_::Column::MadeAt.is_null())
        .order_by_asc(match_::Column::CreatedAt)
        .limit(1)
        .one(db)
        .await?;
    Ok([proposed, direct].iter().flatten().map(made_at).min())
}
