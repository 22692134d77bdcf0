//! Tickets (docs/searching.md): what a studio's backend generates and a game client
//! searches with.
//!
//! A ticket is immutable once generated: its project, mode, player, `mmr`,
//! party, the SHA-256 of its token (never the token) and its expiry. It lives
//! in Redis beside the pools, under a key of no hash tag (a project's tickets
//! spread over a cluster's slots); the check "is this player already
//! searching in this mode?" and the write of the ticket are one pipelined
//! round trip, on one node shared with the tickets generated meanwhile
//! (`batch.rs`; a cluster sends a ticket's own pipeline command by command
//! to their slots' nodes).
//!
//! Two implementations, as for the pool: [`RedisTicketStore`] (the service,
//! over the Redis pool store's connection and prefix) and
//! [`MemoryTicketStore`] (`matchplane dev`, tests). Both keep a ticket's
//! record for [`RECORD_GRACE`] past its expiry, so a status read after the
//! expiry still answers `expired` rather than "unknown".
//!
//! [`StatusMessage`] is the JSON a search's client receives, published on the
//! pool store's status channel of the ticket by whoever changed the search
//! (the worker for `matched`/`failed`, the API for `cancelled`/`expired`).
//!
//! **Pending tickets** (generated, not yet searching) are counted per
//! project for the tier's `maxPendingTickets`: a ticket counts from its
//! generation until a search starts with it or it expires, whichever comes
//! first. Redis keeps them in a sorted set by expiry (`P:{prj}:pending`),
//! counted from the current time on, trimmed of expired ones now and then
//! and left by a start once its search is added; memory keeps a map under
//! one lock. The count never goes over the
//! limit; on Redis, generations racing at the limit may refuse a few more
//! than a one-at-a-time order would (each adds itself, counts, and takes
//! itself out again when over).

mod batch;
mod memory;
mod mode_end;
#[cfg(test)]
mod probe_tests;
mod proposal_status;
mod record;
mod redis;
mod start;
#[cfg(test)]
mod started_tests;
mod status;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_start;
mod void;

use crate::pool::PoolError;
use matchplane_matchmaker::search::SearchEntry;
use matchplane_matchmaker::{Attributes, Party, RawJson};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use memory::MemoryTicketStore;
pub use mode_end::{end_mode, withdraw_proposals};
pub use proposal_status::announce_settled;
pub use redis::RedisTicketStore;
pub use start::{search_of, Hold, StartSearchError, TicketStart};
pub use status::{publish, ExpiredReason, StatusMessage};

/// How long a ticket's record outlives its expiry (status reads only: an
/// expired ticket can never start a search): a client that polls its
/// status right after the expiry still reads `expired` (or the match made
/// just before it) rather than "unknown".
pub const RECORD_GRACE: Duration = Duration::from_secs(120);

/// A ticket about to be stored: what [`NewTicket::into_ticket`] turns into
/// a [`Ticket`], writing its search's pool entry once.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTicket {
    /// `tkt_…` id.
    pub ticket_id: String,
    /// `prj_…` id of the project it belongs to.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The studio's player id.
    pub player_id: String,
    /// The party, if any; every member's ticket carries the same one.
    pub party: Option<Party>,
    /// Its attributes, parsed against the mode ([`Attributes::parse`]),
    /// `mmr` filled from stored ratings where the mode keeps them.
    pub attributes: Attributes,
    /// Lower-case hex SHA-256 of the token.
    pub token_hash: String,
    /// When it was generated (Unix seconds).
    pub created_at: f64,
    /// When its token stops being valid (Unix seconds).
    pub expires_at: f64,
}

impl NewTicket {
    /// The ticket, with its search's pool entry ([`SearchEntry`]) written
    /// from its player, party and attributes.
    ///
    /// # Errors
    /// [`PoolError::Corrupt`] if the entry does not serialise (plain data
    /// always does).
    pub fn into_ticket(self) -> Result<Ticket, PoolError> {
        let corrupt = |e: serde_json::Error| PoolError::Corrupt(format!("ticket entry: {e}"));
        // Serialised straight into the raw value: no parse of the text
        // back (`RawJson::from_text` would check it), on the hot path.
        let entry = RawJson::of(&SearchEntry::new(
            &self.ticket_id,
            &self.player_id,
            self.party.as_ref(),
            &self.attributes,
        ))
        .map_err(corrupt)?;
        Ok(Ticket {
            ticket_id: self.ticket_id,
            project_id: self.project_id,
            game_mode: self.game_mode,
            player_id: self.player_id,
            party: self.party,
            attributes: self.attributes,
            entry,
            token_hash: self.token_hash,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

/// A generated ticket, as stored (a JSON record; the order of its fields
/// does not matter). Built by [`NewTicket::into_ticket`], never changed.
/// A record of the previous layout (attributes at the top, no entry) is
/// read too, its entry written on the read (see `record.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "record::StoredTicket")]
pub struct Ticket {
    /// `tkt_…` id.
    pub ticket_id: String,
    /// `prj_…` id of the project it belongs to.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The studio's player id.
    pub player_id: String,
    /// The party, if any; every member's ticket carries the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub party: Option<Party>,
    /// Its attributes as parsed at generation; `data` is the raw JSON
    /// text the studio sent, never in the pool.
    #[serde(default)]
    pub attributes: Attributes,
    /// The pool entry of its search without `queuedAt`, written once at
    /// generation ([`SearchEntry`]); a start adds the start time
    /// ([`SearchEntry::started`]).
    entry: RawJson,
    /// Lower-case hex SHA-256 of the token.
    pub token_hash: String,
    /// When it was generated (Unix seconds).
    pub created_at: f64,
    /// When its token stops being valid (Unix seconds).
    pub expires_at: f64,
}

impl Ticket {
    /// The pool entry's text of its search before it starts.
    pub fn entry(&self) -> &str {
        self.entry.get()
    }
}

/// Why a ticket could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum CreateTicketError {
    /// The player already has a live search in the mode
    /// (`PLAYER_ALREADY_SEARCHING`).
    #[error("the player is already searching with ticket {ticket_id} in {game_mode}")]
    PlayerAlreadySearching {
        /// The live search's ticket id.
        ticket_id: String,
        /// The mode of that search (the ticket's).
        game_mode: String,
    },
    /// The project holds `limit` pending tickets already
    /// (`TICKET_LIMIT_EXCEEDED`).
    #[error("the project holds its limit of {limit} tickets not yet searching")]
    LimitExceeded {
        /// The tier's `maxPendingTickets`.
        limit: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] PoolError),
}

/// Where tickets are kept. Object safe: share it as `Arc<dyn TicketStore>`.
#[async_trait::async_trait]
pub trait TicketStore: Send + Sync {
    /// Stores `ticket` (at `now`, Unix seconds) unless its player has a live
    /// search in its mode, or its project holds `max_pending` pending
    /// tickets already (`None`: no limit); one Redis round trip (two when
    /// refused), on one node shared with the generations in flight. The
    /// player check is advisory: a search started meanwhile is still
    /// refused by the pool's add step. After a store error the ticket may
    /// have been written all the same: the Redis store deletes it again in
    /// the background once Redis answers (`void.rs`).
    async fn create_within(
        &self,
        ticket: &Ticket,
        now: f64,
        max_pending: Option<u64>,
    ) -> Result<(), CreateTicketError>;

    /// [`TicketStore::create_within`] without a limit on pending tickets.
    async fn create(&self, ticket: &Ticket, now: f64) -> Result<(), CreateTicketError> {
        self.create_within(ticket, now, None).await
    }

    /// Revokes `ticket` if no search ever started with it (the studio
    /// cancelled it before its player searched): its record is deleted, so
    /// its token starts no search (`TICKET_INVALID`), and it no longer
    /// counts as pending. A start that read the record just before fails
    /// alike: the revocation and the pool's add are one step apart in the
    /// ticket's mode. `true` when it was revoked; `false`, and nothing
    /// changed, once a search started with it (it may have started a moment
    /// ago: the caller ends it). Redis: four round trips (the start mark,
    /// the mode's revocation, the record, the pending set), the pending
    /// entry last, so a failure part-way never frees a place for a ticket
    /// that can still search.
    async fn revoke_unstarted(&self, ticket: &Ticket) -> Result<bool, PoolError>;

    /// Every member a kept ticket of party `party_id` of `project_id`
    /// named (its members may have changed between tickets), sorted; `None`
    /// if no such ticket is kept (for ending a whole party's searches).
    /// Redis: one round trip.
    async fn party_members(
        &self,
        project_id: &str,
        party_id: &str,
    ) -> Result<Option<Vec<String>>, PoolError>;

    /// How many tickets of `project_id` are pending (generated, not yet
    /// searching, not expired) at `now`.
    async fn pending(&self, project_id: &str, now: f64) -> Result<u64, PoolError>;

    /// Whether a search was ever started with ticket `ticket_id` of
    /// `project_id` (kept until the ticket expires). Kept apart from the
    /// mode's pool (on Redis in the project's slot, beside its pending
    /// tickets, written with the project's count after the add), so that a
    /// ticket whose pool lost its search with the pool's data reads
    /// `SEARCH_LOST` rather than `created` (docs/searching.md). `false` for
    /// a search started just now whose project step is still queued
    /// elsewhere, and for a ticket started before this mark was kept.
    async fn started(&self, project_id: &str, ticket_id: &str) -> Result<bool, PoolError>;

    /// The ticket `ticket_id` of `project_id`, kept until [`RECORD_GRACE`]
    /// after its expiry; `None` if unknown, of another project, or gone.
    /// The caller compares `expires_at` with its clock.
    async fn get(&self, project_id: &str, ticket_id: &str) -> Result<Option<Ticket>, PoolError>;

    /// Keeps the records of `ticket_ids` of `project_id` at least until
    /// `until` (Unix seconds), never shortening one; an id without a record
    /// is skipped. The outbox consumer calls it for the tickets of matches
    /// it could not store yet, so a matched ticket stays readable (its
    /// status `MATCH_PENDING`) for as long as the database is out. Redis:
    /// one pipelined round trip (`EXPIREAT … GT` per record).
    async fn keep_until(
        &self,
        project_id: &str,
        ticket_ids: &[String],
        until: f64,
    ) -> Result<(), PoolError>;

    /// Starts a search with the ticket `start` names, if the token's hash,
    /// mode and project are the ticket's and it has not expired; returns
    /// the ticket. The search is added under
    /// [`crate::pool::Searches::add_search`]'s rules, with its deadline
    /// from [`TicketStart::hold`] and `queuedAt` = [`TicketStart::now`].
    ///
    /// Redis: one script, one round trip (the record read and the add in
    /// one atomic step). Memory: a read, then the pool's add.
    ///
    /// Errors: [`StartSearchError::TicketInvalid`], or the pool's refusal.
    async fn start_search(&self, start: &TicketStart<'_>) -> Result<Ticket, StartSearchError>;

    /// Checks the backend serves data commands (readiness): on Redis one
    /// read under the prefix, which fails wherever a ticket's commands
    /// would (a Redis Cluster that is down included, see
    /// docs/operations.md, 'Readiness'), and the status subscription's
    /// connection once a WebSocket search opened it.
    async fn ping(&self) -> Result<(), PoolError>;

    /// Where tickets and pools live, for readiness: `redis`, or
    /// `in-process` (the memory stores of `matchplane dev`).
    fn live_store(&self) -> &'static str;
}

/// Seconds a record is kept from `now`: until the expiry plus the grace.
pub(crate) fn keep_seconds(ticket: &Ticket, now: f64) -> u64 {
    let left = (ticket.expires_at - now).max(0.0).ceil() as u64;
    left + RECORD_GRACE.as_secs()
}
