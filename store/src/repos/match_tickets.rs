//! The tickets of stored matches, with their token hashes (docs/architecture.md#where-each-rule-lives):
//! written by the worker in the match's transaction, read by the API when
//! the ticket store has lost a matched ticket's record.

use crate::entities::match_ticket::{self, Entity as MatchTickets};
use crate::repos::insert_absent::insert_absent;
use crate::repos::StoreError;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

/// Stores `rows`, leaving alone each whose ticket and match exist (a match
/// handed over twice); many rows per statement. A ticket seated in one
/// match and then, once that match was released, in another gets a row in
/// each (docs/acceptance.md, "Releasing a match"). Returns how many were
/// inserted.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn insert_if_absent<C: ConnectionTrait>(
    db: &C,
    rows: Vec<match_ticket::Model>,
) -> Result<u64, StoreError> {
    insert_absent::<MatchTickets, _>(
        db,
        rows,
        [
            match_ticket::Column::TicketId,
            match_ticket::Column::MatchId,
        ],
    )
    .await
}

/// The stored match ticket `ticket_id` of `project_id` in the match that
/// seats it now; `None` if no stored match of the project seats it. A
/// ticket seated more than once was freed by each earlier match's release
/// (or assignment timeout) before it searched again, so the one match not
/// `released` or `unassigned` is its current one; when every one is, the
/// latest (the greatest `mat_…` id, a ULID).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    ticket_id: &str,
) -> Result<Option<match_ticket::Model>, StoreError> {
    use crate::entities::match_;
    use sea_orm::{QueryOrder, QuerySelect};
    let mut rows = MatchTickets::find()
        .filter(match_ticket::Column::ProjectId.eq(project_id))
        .filter(match_ticket::Column::TicketId.eq(ticket_id))
        .order_by_desc(match_ticket::Column::MatchId)
        .all(db)
        .await?;
    if rows.len() < 2 {
        return Ok(rows.pop());
    }
    let ids: Vec<&str> = rows.iter().map(|row| row.match_id.as_str()).collect();
    let freed: Vec<String> = super::matches::scoped(project_id)
        .select_only()
        .column(match_::Column::Id)
        .filter(match_::Column::Id.is_in(ids))
        .filter(match_::Column::Status.is_in([
            super::match_status::RELEASED,
            super::match_status::UNASSIGNED,
        ]))
        .into_tuple()
        .all(db)
        .await?;
    let current = rows
        .iter()
        .position(|row| !freed.contains(&row.match_id))
        .unwrap_or(0);
    Ok(Some(rows.swap_remove(current)))
}

/// The stored tickets of the matches `match_ids` of `project_id` (any
/// order); a match stored before its tickets were kept has none.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn of_matches<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_ids: &[&str],
) -> Result<Vec<match_ticket::Model>, StoreError> {
    if match_ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(MatchTickets::find()
        .filter(match_ticket::Column::ProjectId.eq(project_id))
        .filter(match_ticket::Column::MatchId.is_in(match_ids.iter().copied()))
        .all(db)
        .await?)
}

/// The stored tickets of `player_id` in `project_id` whose match is made,
/// not assigned and created at or after `since` (any order): the matches
/// the player may still be waiting in for an assignment (the caller keeps
/// those of modes with `assignment`). A released, unassigned, cancelled or
/// assigned match is not among them.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn made_unassigned_of_player<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    player_id: &str,
    since: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<match_ticket::Model>, StoreError> {
    use crate::entities::match_;
    use sea_orm::{QuerySelect, QueryTrait};
    // The project's recent made matches first (few, by the matches'
    // indexes), then their tickets by match id.
    let waiting = super::matches::scoped(project_id)
        .select_only()
        .column(match_::Column::Id)
        .filter(match_::Column::Status.eq(super::match_status::MADE))
        .filter(match_::Column::Assignment.is_null())
        .filter(match_::Column::CreatedAt.gte(since))
        .into_query();
    Ok(MatchTickets::find()
        .filter(match_ticket::Column::ProjectId.eq(project_id))
        .filter(match_ticket::Column::MatchId.in_subquery(waiting))
        .filter(match_ticket::Column::PlayerId.eq(player_id))
        .limit(16)
        .all(db)
        .await?)
}
