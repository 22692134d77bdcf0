//! A ticket whose mode's pool holds neither a live search of it nor how
//! its last search ended: one rule for every reader of its status (the
//! WebSocket's re-read, the REST poll, the studio's ticket status), so each
//! answers what the others do (docs/searching.md, "Statuses").
//!
//! Ended records outlast every ticket (a day, the longest ticket TTL), and
//! every way a search leaves the pool writes one in the same atomic step,
//! a search between states included: a claimed match being stored
//! (`MATCH_PENDING`) and a released ticket keep their records, a proposed
//! search stays live, a search started again after a search nothing held
//! has the first one's record until the new one is added. So a ticket
//! whose pool knows nothing, whose search was started and that no stored
//! match seats, was lost with the pool's data (docs/operations.md, "What
//! losing a dependency costs").

use super::matched::matched_id;
use super::Play;
use crate::problem::ApiError;
use matchplane_matchmaker::Code;
use matchplane_store::tickets::Ticket;
use sea_orm::DatabaseConnection;

/// Whether the reader knows a search was started with the ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Started {
    /// It holds the search (the socket that started it).
    Held,
    /// It does not: the ticket store's mark says
    /// ([`matchplane_store::tickets::TicketStore::started`]).
    Ask,
}

/// What a ticket unknown to its pool is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Untracked {
    /// A stored match seats it: `matched` (the pool lost the claim's
    /// record, or the match outlived it).
    Matched {
        /// The match's id.
        match_id: String,
    },
    /// Its ticket has expired: `expired`, `TICKET_TTL`.
    Expired,
    /// A search was started with it and the pool lost it: `expired`,
    /// `SEARCH_LOST`.
    Lost,
    /// No search was started with it: `created`.
    NotStarted,
}

impl Untracked {
    /// The `reason` of an expired status: `TICKET_TTL`, `SEARCH_LOST`;
    /// `None` when it is not expired.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            Untracked::Expired => Some("TICKET_TTL"),
            Untracked::Lost => Some(Code::SearchLost.as_str()),
            Untracked::Matched { .. } | Untracked::NotStarted => None,
        }
    }
}

/// What `ticket` is at `now` (Unix seconds) when its pool holds neither its
/// live search nor an ended record of it: matched when a stored match
/// seats it; else expired once the ticket has; else lost when a search
/// was started with it ([`Started`]); else never started. Never
/// [`Untracked::NotStarted`] for [`Started::Held`].
///
/// # Errors
/// A database or ticket store failure (`500`, `503`).
pub async fn untracked(
    play: &Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
    now: f64,
    started: Started,
) -> Result<Untracked, ApiError> {
    if let Some(match_id) = matched_id(db, &ticket.project_id, &ticket.ticket_id).await? {
        return Ok(Untracked::Matched { match_id });
    }
    if ticket.expires_at <= now {
        return Ok(Untracked::Expired);
    }
    let started = match started {
        Started::Held => true,
        Started::Ask => {
            play.tickets
                .started(&ticket.project_id, &ticket.ticket_id)
                .await?
        }
    };
    Ok(if started {
        Untracked::Lost
    } else {
        Untracked::NotStarted
    })
}

/// The studio's `404` for a ticket the store does not hold: it may have
/// been lost with the store's data, as the player's `401` says too.
pub const NO_SUCH_TICKET: &str = "no such ticket: it never existed, or its record is gone \
    (past its retention, cancelled before it searched, or lost with the matchmaking store's \
    data, as in a `matchplane dev` restart); generate a new one";
