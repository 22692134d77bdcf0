//! Proposals the pool no longer holds while their rows still say
//! [`PROPOSED`] (docs/acceptance.md, "When a proposal is lost"): the pool
//! lost them with its data (Redis restarted empty, or was flushed), so no
//! closing will ever store how they ended. The worker marks them
//! `cancelled` ([`super::mark_cancelled`]) once they are well past any
//! deadline.

use super::PROPOSED;
use crate::entities::match_::{self, Entity as Matches};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::Value;

/// The stored proposals of `project_id`'s mode `game_mode` still
/// [`PROPOSED`] that were made between `from` and `to`, oldest first, at
/// most `limit`: each id with its stored answers. Read by the range of
/// their ids (a `mat_…` id is a ULID, which sorts by creation) on the
/// partial index of the matches still proposed (migration
/// `z_proposed_index`), which holds the open proposals only: the status
/// is written into the statement, not bound, so that both databases'
/// planners see that the index applies.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn proposed_between<C: ConnectionTrait>(
    db: &C,
    (project_id, game_mode): (&str, &str),
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    limit: u64,
) -> Result<Vec<(String, Value)>, StoreError> {
    let rows = Matches::find()
        .filter(match_::Column::ProjectId.eq(project_id))
        .filter(match_::Column::GameMode.eq(game_mode))
        .filter(match_::Column::Id.gte(id_at(from)))
        .filter(match_::Column::Id.lt(id_at(to)))
        .filter(Expr::cust(format!("status = '{PROPOSED}'")))
        .order_by_asc(match_::Column::Id)
        .limit(limit)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            (
                row.id,
                row.answers
                    .unwrap_or_else(|| Value::Object(Default::default())),
            )
        })
        .collect())
}

/// The least `mat_…` id of a match made at `at`.
fn id_at(at: DateTime<Utc>) -> String {
    let ms = u64::try_from(at.timestamp_millis()).unwrap_or(0);
    format!("mat_{}", ulid::Ulid::from_parts(ms, 0))
}

#[cfg(test)]
mod tests {
    use super::id_at;

    #[test]
    fn ids_of_later_times_sort_after() {
        let t = chrono::Utc::now();
        let id = format!("mat_{}", ulid::Ulid::from_datetime(t.into()));
        assert!(id_at(t - chrono::Duration::milliseconds(1)) <= id);
        assert!(id < id_at(t + chrono::Duration::milliseconds(1)));
    }
}
