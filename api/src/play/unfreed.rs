//! Tickets of a released match that the pool still holds as matched: a
//! release stores the match's status first and frees its tickets in the
//! pool after, so a process stopped between the two (a worker's
//! assignment timeout, an API's release) left them refused as matched
//! (`409 TICKET_ALREADY_MATCHED`) until they expired. A start of such a
//! ticket finishes the release, as the release itself would on a retry,
//! and starts again (docs/acceptance.md, "Releasing a match").

use super::Play;
use crate::problem::ApiError;
use matchplane_store::pool::AddSearchError;
use matchplane_store::pool::{Ended, EndedSearch, ModeKey, SearchState};
use matchplane_store::released::release_match;
use matchplane_store::repos::match_status::{self, ReleaseOutcome};
use matchplane_store::repos::matches;
use matchplane_store::tickets::{StartSearchError, StatusMessage, Ticket, TicketStart};
use sea_orm::DatabaseConnection;

/// Starts `start` again after its ticket store refused it as matched, if
/// [`freed`] frees its ticket; the same refusal otherwise.
///
/// # Errors
/// `TICKET_ALREADY_MATCHED` when the ticket stays matched; the second
/// start's refusal.
pub async fn start_freed(
    play: &Play,
    db: &DatabaseConnection,
    start: &TicketStart<'_>,
) -> Result<Ticket, StartSearchError> {
    if freed(play, db, start.mode, start.ticket_id).await {
        play.tickets.start_search(start).await
    } else {
        Err(StartSearchError::Add(AddSearchError::TicketAlreadyMatched))
    }
}

/// Frees ticket `ticket_id` of `mode` if the pool holds it as matched to
/// a match whose stored status says it was released (or unassigned):
/// whether it did. Failures are logged and answer `false` (the start's
/// own refusal stands).
pub async fn freed(play: &Play, db: &DatabaseConnection, mode: &ModeKey, ticket_id: &str) -> bool {
    let Ok(Some(SearchState::Ended(EndedSearch {
        how: Ended::Matched { match_id },
        ..
    }))) = play.pool.search_state(mode, ticket_id).await
    else {
        return false;
    };
    let Ok(row) = matches::get(db, &mode.project_id, &match_id).await else {
        return false;
    };
    let told = match row.status.as_str() {
        match_status::RELEASED => (match_status::RELEASED, &StatusMessage::Released),
        match_status::UNASSIGNED => (match_status::UNASSIGNED, &StatusMessage::AssignmentTimeout),
        _ => return false,
    };
    // The release's own window: a match released within it is finished.
    let window = chrono::Duration::days(2);
    let now = chrono::Utc::now();
    let pool = play.pool.as_ref();
    match release_match::<ApiError>(db, pool, mode, &match_id, told, window, now).await {
        Ok(ReleaseOutcome::Released(_) | ReleaseOutcome::Already(_)) => {
            tracing::info!(ticket_id, match_id = %match_id, "a released match's tickets freed at a start");
            true
        }
        Ok(_) => false,
        Err(error) => {
            tracing::warn!(?error, ticket_id, "finishing a release failed");
            false
        }
    }
}
