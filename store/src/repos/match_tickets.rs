//! The tickets of stored matches, with their token hashes (docs/architecture.md#where-each-rule-lives):
//! written by the worker in the match's transaction, read by the API when
//! the ticket store has lost a matched ticket's record.

use crate::entities::match_ticket::{self, Entity as MatchTickets};
use crate::repos::insert_absent::insert_absent;
use crate::repos::StoreError;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

/// Stores `rows`, leaving alone each whose ticket id exists (a match handed
/// over twice); many rows per statement. Returns how many were inserted.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn insert_if_absent<C: ConnectionTrait>(
    db: &C,
    rows: Vec<match_ticket::Model>,
) -> Result<u64, StoreError> {
    insert_absent::<MatchTickets, _>(db, rows, [match_ticket::Column::TicketId]).await
}

/// The stored match ticket `ticket_id` of `project_id`; `None` if no stored
/// match of the project seats it.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    ticket_id: &str,
) -> Result<Option<match_ticket::Model>, StoreError> {
    Ok(MatchTickets::find()
        .filter(match_ticket::Column::ProjectId.eq(project_id))
        .filter(match_ticket::Column::TicketId.eq(ticket_id))
        .one(db)
        .await?)
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
