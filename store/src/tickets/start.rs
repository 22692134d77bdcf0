//! Starting a search from a stored ticket: the request, its rules and its
//! errors, shared by both ticket stores (Redis reads the ticket's record and
//! adds the search, see `pool/redis/start.rs`; memory reads the ticket and
//! adds the search under its pool's lock).

use super::Ticket;
use crate::pool::{AddSearchError, ModeKey, PlayerSearchScope, Search};
use matchplane_matchmaker::recheck::SearchCheck;
use matchplane_matchmaker::{FieldError, GameModeConfig};

/// How a search is held, which sets its deadline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hold {
    /// A WebSocket: the search lives `lease_seconds` past the last renewal
    /// by the API instance holding the socket (it renews while the socket
    /// is open, see `touch_search`), never past its ticket's expiry; an
    /// instance that stops without ending it (a crash) leaves it for at
    /// most that long.
    Socket {
        /// The socket lease (seconds).
        lease_seconds: f64,
    },
    /// A client that polls: the search lives `poll_seconds` past its last
    /// poll, never past its ticket's expiry.
    Polled {
        /// The REST poll timeout (seconds).
        poll_seconds: f64,
    },
}

impl Hold {
    /// The deadline (Unix seconds) of a search started at `now` with a
    /// ticket expiring at `expires_at`.
    pub fn deadline(self, now: f64, expires_at: f64) -> f64 {
        match self {
            Hold::Socket { lease_seconds } => (now + lease_seconds).min(expires_at),
            Hold::Polled { poll_seconds } => (now + poll_seconds).min(expires_at),
        }
    }
}

/// A search start with a token: which ticket the token names, and the
/// SHA-256 of the whole token, which must be the ticket's.
#[derive(Debug, Clone)]
pub struct TicketStart<'a> {
    /// The project and mode the token names (the ticket's record and pool
    /// are under this project; its mode must be this one).
    pub mode: &'a ModeKey,
    /// `tkt_…` id the token names.
    pub ticket_id: &'a str,
    /// Lower-case hex SHA-256 of the token.
    pub token_hash: &'a str,
    /// Now (Unix seconds): the search's `queuedAt`, and the ticket must
    /// expire after it.
    pub now: f64,
    /// How the search is held.
    pub hold: Hold,
    /// The project's `maxConcurrentSearches`; `None` means no limit.
    pub max_live: Option<u64>,
    /// The project's `playerSearchScope` (see
    /// [`crate::pool::Searches::add_search_scoped`]).
    pub scope: PlayerSearchScope,
    /// The mode's config as the start reads it: the ticket's search must
    /// pass the checks a cycle re-checks every search with
    /// ([`SearchCheck`]), so a ticket the config has come to rule out since
    /// it was generated (a re-search after a change) is refused rather than
    /// added and failed at the next cycle. `None`: not checked.
    pub config: Option<&'a GameModeConfig>,
}

/// Why a search could not start from a ticket.
#[derive(Debug, thiserror::Error)]
pub enum StartSearchError {
    /// No such ticket in the project, not this token's, of another mode, or
    /// expired (`TICKET_INVALID`): one error for all, as docs/searching.md asks.
    #[error("the ticket is unknown, expired or not this token's")]
    TicketInvalid,
    /// The mode's config rules the ticket out ([`TicketStart::config`]):
    /// the failure, with the code a cycle would fail its search with.
    #[error("the game mode's config rules the ticket out: {}", .0.message)]
    RuledOut(FieldError),
    /// The pool refused the search (or the store failed).
    #[error(transparent)]
    Add(#[from] AddSearchError),
}

impl TicketStart<'_> {
    /// The checks a start makes on the ticket's record: its deadline if
    /// `ticket` may start a search now.
    ///
    /// # Errors
    /// [`StartSearchError::TicketInvalid`], then
    /// [`StartSearchError::RuledOut`].
    pub(crate) fn check(&self, ticket: Option<&Ticket>) -> Result<f64, StartSearchError> {
        let ticket = ticket
            .filter(|t| {
                t.ticket_id == self.ticket_id
                    && t.project_id == self.mode.project_id
                    && t.game_mode == self.mode.mode
                    && same_hash(&t.token_hash, self.token_hash)
                    && t.expires_at > self.now
            })
            .ok_or(StartSearchError::TicketInvalid)?;
        if let Some(config) = self.config {
            SearchCheck::new(config)
                .check(&search_of(ticket, self.now))
                .map_err(StartSearchError::RuledOut)?;
        }
        Ok(self.hold.deadline(self.now, ticket.expires_at))
    }
}

/// The search of `ticket` started at `queued_at` ([`Search::new`]); its
/// pool entry is [`Ticket::entry`] with that `queuedAt`.
pub fn search_of(ticket: &Ticket, queued_at: f64) -> Search {
    Search::new(
        ticket.ticket_id.as_str(),
        ticket.player_id.as_str(),
        ticket.party.clone(),
        &ticket.attributes,
        queued_at,
    )
}

/// Equal hex digests, compared without an early exit.
fn same_hash(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
