//! Searches that nothing holds: those a WebSocket started under the
//! previous release, which marked no holder and gave each its ticket's
//! expiry as its deadline (docs/deployment.md, "Upgrading"). A search of
//! this release is held by a socket (marked, lapsing with the socket's
//! lease) or by polls (its deadline within the REST poll timeout), so a
//! search without the mark whose deadline lies past both holds is one of
//! those. Without this, such a search refused its ticket's next search
//! (`409 SEARCH_ALREADY_ACTIVE`) and could be matched with nobody there
//! until its ticket expired.

use super::Play;
use matchplane_store::pool::{
    AddSearchError, EndOutcome, EndResult, ModeKey, PoolError, SearchState, MAX_DEADLINES_READ,
};
use matchplane_store::tickets::{StartSearchError, Ticket, TicketStart};

/// The latest deadline a search held under `play`'s settings can have at
/// `now` (Unix seconds): past both holds, with a second to spare.
fn held_until(play: &Play, now: f64) -> f64 {
    let settings = &play.settings;
    let longest = settings
        .rest_poll_timeout
        .max(settings.socket_lease())
        .as_secs_f64();
    now + longest + 1.0
}

/// Ends ticket `ticket_id`'s live search in `mode` as `SOCKET_LAPSED` if
/// nothing holds it, so that the ticket can search again at once (the
/// client of a socket the previous release held, reconnecting); a held
/// search is left alone. Whether it ended one.
pub async fn ended_unheld(play: &Play, mode: &ModeKey, ticket_id: &str, now: f64) -> bool {
    // One read on the common refusal (a second start of a held search).
    match play.pool.deadline(mode, ticket_id).await {
        Ok(Some(deadline)) if deadline > held_until(play, now) => {}
        _ => return false,
    }
    match play.pool.search_state(mode, ticket_id).await {
        Ok(Some(SearchState::Live(live))) if !live.socket => {
            let Ok(Some(ticket)) = play.tickets.get(&mode.project_id, ticket_id).await else {
                return false;
            };
            let lapsed = EndOutcome::ExpiredFor {
                reason: "SOCKET_LAPSED".to_owned(),
            };
            let ended = super::status::end(play, &ticket, lapsed).await;
            tracing::info!(
                ticket_id,
                ended = ?ended,
                "a search nothing held ended for its ticket's new search"
            );
            matches!(ended, Ok(EndResult::Ended))
        }
        Ok(_) => false,
        Err(error) => {
            tracing::warn!(%error, ticket_id, "reading an active search failed");
            false
        }
    }
}

/// `start` again once [`ended_unheld`] ended the live search that refused
/// it; that refusal (`SEARCH_ALREADY_ACTIVE`) when the search is held.
///
/// # Errors
/// The store's refusal of the start.
pub async fn start_over_unheld(
    play: &Play,
    start: &TicketStart<'_>,
) -> Result<Ticket, StartSearchError> {
    if ended_unheld(play, start.mode, start.ticket_id, start.now).await {
        play.tickets.start_search(start).await
    } else {
        Err(StartSearchError::Add(AddSearchError::SearchAlreadyActive))
    }
}

/// Gives every search that nothing holds, in every project's pools, a
/// socket's lease from `now` (Unix seconds): unless its client searches
/// again meanwhile, it ends `expired` when the lease lapses, instead of
/// waiting in the pool for its ticket's expiry with nobody there to play.
/// Run once when the API starts. Answers how many it found.
///
/// # Errors
/// A failed read or write of the pools (what was done stays done; the
/// next start runs it again).
pub async fn lapse_unheld(play: &Play, now: f64) -> Result<usize, PoolError> {
    let (after, lease) = (held_until(play, now), play.settings.socket_lease());
    let mut lapsed = 0;
    for project in play.pool.projects_with_searches().await? {
        for name in play.pool.modes_with_searches(&project).await? {
            let mode = ModeKey::new(&project, &name);
            let late = play
                .pool
                .deadlines_after(&mode, after, MAX_DEADLINES_READ)
                .await?;
            for ticket in late {
                let state = play.pool.search_state(&mode, &ticket).await?;
                if matches!(state, Some(SearchState::Live(ref live)) if !live.socket)
                    && play
                        .pool
                        .touch_search(&mode, &ticket, now + lease.as_secs_f64())
                        .await?
                {
                    lapsed += 1;
                }
            }
        }
    }
    Ok(lapsed)
}
