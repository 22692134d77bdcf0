//! Releasing a made match (docs/acceptance.md): the [`Releases`] part of the pool
//! store. A release turns each of the match's tickets' `matched` record into
//! a `released` one carrying the ticket's first `queuedAt`, so the ticket
//! may start a search again (until it expires) and resumes that wait: both
//! stores' add step reads the record ([`super::Searches::add_search`], and
//! the ticket store's start).

/// One ticket of a released match.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedTicket {
    /// `tkt_…` id.
    pub ticket_id: String,
    /// When its first search started (Unix seconds): the match's
    /// `createdAt` (its fill's, for a player a backfill seated) minus the
    /// player's `waitSeconds`.
    pub queued_at: f64,
}

/// Releasing the tickets of a made match.
#[async_trait::async_trait]
pub trait Releases: Send + Sync {
    /// Marks each of `tickets` whose search ended matched into `match_id`
    /// as [`super::Ended::Released`] at `now` (Unix seconds), keeping its
    /// `queued_at`. Idempotent: a ticket released from this match already
    /// is left as it is. Returns the ids released (by this call or
    /// before), in `tickets`' order; a ticket whose record is gone, or
    /// that searched again since, is left out. One atomic step (one Redis
    /// script).
    async fn release_tickets(
        &self,
        mode: &super::ModeKey,
        match_id: &str,
        tickets: &[ReleasedTicket],
        now: f64,
    ) -> Result<Vec<String>, super::PoolError>;
}
