//! The live pools: where searches wait between "start a search" and a match.
//!
//! The interface is cut into one trait per concern, so each caller names
//! what it uses and each implementation keeps one file per concern:
//!
//! - [`Searches`]: adding, ending, touching and expiring live searches, and
//!   their annotations (pings, waiting reasons): the API and the worker;
//! - [`PoolReads`]: what the pools hold (a mode's snapshot, a ticket's
//!   state, where a project's searches are);
//! - [`Claims`]: taking a group of searches into a match under the mode's
//!   lease (the worker's cycle);
//! - [`Leases`]: the fenced lease that makes one worker a mode's owner;
//! - [`Outbox`]: the match records a claim leaves for the worker to store;
//! - [`StatusBus`]: a ticket's status messages, across processes;
//! - [`Proposals`]: groups held as match proposals until everyone accepts
//!   (acceptance), their answers and their closing.
//! - [`Backfills`]: the open seats of running matches and their fills
//!   (claimed like matches, see [`backfills`]).
//! - [`Releases`]: a released match's tickets, free to search again.
//!
//! [`PoolStore`] is all of them at once (a blanket impl): the handle the API
//! and the worker share, as `Arc<dyn PoolStore>`. Two implementations pass
//! one conformance suite:
//!
//! - [`RedisPoolStore`]: the service's store, shared by every API and worker
//!   replica; its key layout and the reasons behind it are in [`redis`].
//! - [`MemoryPoolStore`]: in-process, for `matchplane dev` and unit tests.
//!
//! The rules both keep (docs/searching.md, docs/architecture.md):
//!
//! - one live search per ticket and one per player per mode;
//! - a project never holds more live searches than its tier allows, checked
//!   in the same atomic step that adds the search;
//! - a search ends exactly once: matched (by a claim) XOR cancelled, expired
//!   or failed (by [`Searches::end_search`] or [`Searches::expire_due`]);
//! - a claim takes every search of a group or none, only under the mode's
//!   current lease fencing token, and writes the match to the mode's outbox
//!   in the same step, so a match is never lost between Redis and PostgreSQL.
//!
//! Times in this module are Unix seconds as `f64` (the clock of
//! [`Search::queued_at`]); the store never reads the clock for them, the caller
//! passes `now` and deadlines. Lease and outbox idle times are [`Duration`]s
//! measured by the backend (Redis's own clock, or tokio's in memory).

pub mod backfills;
pub mod closed;
mod errors;
pub mod lapse_grace;
mod leases;
mod memory;
pub mod proposals;
pub mod redis;
pub mod releases;
mod types;
mod withdraw;

#[cfg(test)]
mod conformance;

use std::time::Duration;

use futures::stream::BoxStream;
pub use matchplane_matchmaker::{Party, Search};

pub use backfills::{
    BackfillChange, BackfillStatus, Backfills, FillClaim, FillOutcome, LiveBackfill, OpenBackfill,
};
pub use errors::{AddSearchError, PoolError};
pub use leases::{Leases, MAX_LEASE_EPOCH};
pub use memory::MemoryPoolStore;
pub use proposals::{
    settle, settle_excusing, withdraw, AnswerOutcome, Finish, FinishMember, FinishOutcome,
    ProposalClaim, ProposalMember, ProposalState, Proposals, Settled,
};
pub use redis::{Persistence, RedisPoolConfig, RedisPoolStore};
pub use releases::{ReleasedTicket, Releases};
pub(crate) use types::wall_clock;
pub use types::{
    Claim, ClaimOutcome, EndOutcome, EndResult, Ended, EndedSearch, LiveSearch, ModeActivity,
    ModeKey, OutboxEntry, PlayerSearchScope, SearchState, SERVER_STOPPING,
};

/// A stream of status messages (the JSON text published for one ticket).
///
/// Dropping it ends the subscription.
pub type StatusStream = BoxStream<'static, String>;

/// Every part of the pool store at once: what the API's player side and the
/// worker hold, as `Arc<dyn PoolStore>`. Implemented for every type that
/// implements the parts; see the module documentation for the rules.
pub trait PoolStore:
    Searches + PoolReads + Claims + Leases + Outbox + StatusBus + Proposals + Backfills + Releases
{
}

impl<T> PoolStore for T where
    T: Searches
        + PoolReads
        + Claims
        + Leases
        + Outbox
        + StatusBus
        + Proposals
        + Backfills
        + Releases
{
}

/// The lifecycle of live searches: add, end, touch, expire, and the
/// annotations a live search carries (its pings, the last cycle's waiting
/// reason).
#[async_trait::async_trait]
pub trait Searches: Send + Sync {
    /// Marks ticket `ticket_id` of `mode` (expiring at `expires_at`, Unix
    /// seconds) revoked, unless a search started with it (it is live, or
    /// ended recently): every later add of a search with it is refused
    /// with [`AddSearchError::TicketRevoked`], in the same atomic step as
    /// the add's other checks. `true` when it is revoked. Redis: one round
    /// trip. See [`crate::tickets::TicketStore::revoke_unstarted`].
    async fn revoke_ticket(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        expires_at: f64,
    ) -> Result<bool, PoolError>;

    /// Adds a live search to `mode`'s pool, in one atomic step (one Redis round
    /// trip).
    ///
    /// `deadline` (Unix seconds) is when the search expires unless touched
    /// (the ticket's expiry, or the REST poll deadline): see
    /// [`Searches::expire_due`]. `max_live` is the project's
    /// `maxConcurrentSearches`; `None` means no limit.
    ///
    /// Errors: [`AddSearchError::SearchAlreadyActive`] (the ticket is
    /// searching), [`AddSearchError::PlayerAlreadySearching`] (with the live
    /// ticket of that player in this mode),
    /// [`AddSearchError::TicketAlreadyMatched`] (the ticket's search was
    /// matched: it is spent), [`AddSearchError::QuotaExceeded`],
    /// [`AddSearchError::TicketRevoked`] (see [`Searches::revoke_ticket`]).
    /// A ticket whose previous search ended without a match may search again.
    async fn add_search(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
    ) -> Result<(), AddSearchError> {
        let scope = PlayerSearchScope::Mode;
        self.add_search_scoped(mode, search, deadline, max_live, scope, false)
            .await
    }

    /// [`Searches::add_search`] under the project's `playerSearchScope`:
    /// with [`PlayerSearchScope::Project`], a player with a live search in
    /// any mode of the project (searching or proposed) is refused with
    /// [`AddSearchError::PlayerAlreadySearching`] naming that search and
    /// its mode, in the same atomic step as the add. `socket`: a WebSocket
    /// holds the search ([`crate::tickets::Hold::Socket`];
    /// [`LiveSearch::socket`]), marked in the same step.
    async fn add_search_scoped(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
        scope: PlayerSearchScope,
        socket: bool,
    ) -> Result<(), AddSearchError>;

    /// Counts `mode`'s pool again into its project's live count and list
    /// of modes with searches, waiting for it. A process that died between
    /// an add's steps can leave a search its project does not list; this
    /// lists it. Called before a mode is deleted, so that the sweep that
    /// fails a deleted mode's searches finds every one of them.
    ///
    /// Errors: [`PoolError`] when the store cannot be reached.
    async fn recount(&self, mode: &ModeKey) -> Result<(), PoolError>;

    /// Ends a live search as cancelled, expired or failed.
    ///
    /// Returns [`EndResult::Ended`] if it was live and this call ended it,
    /// [`EndResult::Matched`] if a claim took it first (it cannot be ended any
    /// more), [`EndResult::NotLive`] otherwise (unknown, or already ended).
    async fn end_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        outcome: &EndOutcome,
    ) -> Result<EndResult, PoolError>;

    /// Moves a live search's deadline (Unix seconds), e.g. when a REST search
    /// is polled or its socket renews its lease. Returns `false` if the
    /// search is not live.
    async fn touch_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        deadline: f64,
    ) -> Result<bool, PoolError>;

    /// Ends as [`Ended::Expired`] up to `limit` (at most 1 000 per call) live
    /// searches of `mode` whose deadline is at or before `now` (Unix seconds),
    /// earliest first, returning their ticket ids (so the caller can tell
    /// their clients). Call again while it returns a full batch.
    async fn expire_due(
        &self,
        mode: &ModeKey,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        self.expire_due_by(mode, now, now, limit).await
    }

    /// [`Searches::expire_due`] of the searches whose deadline is at or
    /// before `due_by` (Unix seconds, at most `now`), each recorded as
    /// ended at `now`: after the store was out of reach, the worker expires
    /// only what came due before the outage for a while (the searches'
    /// clients could not renew them meanwhile: docs/searching.md).
    async fn expire_due_by(
        &self,
        mode: &ModeKey,
        due_by: f64,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError>;

    /// Records one round trip (milliseconds) of a live search: keeps the last
    /// five samples and sets its `ping_ms` to their median (the mean of the two
    /// middle samples while there are an even number). Returns the new
    /// median, or `None` if the search is not live.
    async fn record_ping(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        rtt_ms: f64,
    ) -> Result<Option<f64>, PoolError>;

    /// Stores each live search's latest `waitingReason` (JSON text from the
    /// cycle), replacing the previous one; entries of searches no longer live
    /// are ignored.
    async fn set_waiting_reasons(
        &self,
        mode: &ModeKey,
        reasons: &[(String, String)],
    ) -> Result<(), PoolError>;
}

/// What the pools hold: a mode's searches, a ticket's search, where a
/// project's searches are and how many.
#[async_trait::async_trait]
pub trait PoolReads: Send + Sync {
    /// Every live search of `mode`, in no particular order, each with its
    /// current `ping_ms` (median of its last five samples, once measured).
    async fn snapshot(&self, mode: &ModeKey) -> Result<Vec<Search>, PoolError>;

    /// Where a ticket's search stands: live (with its deadline and the last
    /// cycle's `waitingReason`), ended (kept for the store's retention), or
    /// `None` if the ticket never searched in `mode` or its record expired.
    async fn search_state(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<SearchState>, PoolError>;

    /// When ticket `ticket_id`'s search in `mode` expires unless touched
    /// (Unix seconds), in one read: `None` if it has no deadline. A search
    /// a claim took may keep its deadline until the expiry sweep drops it,
    /// so a caller that acts on a live search reads
    /// [`PoolReads::search_state`] too.
    async fn deadline(&self, mode: &ModeKey, ticket_id: &str) -> Result<Option<f64>, PoolError>;

    /// Up to `limit` (at most 10 000) tickets of `mode` whose search's
    /// deadline is after `after` (Unix seconds), in no particular order; as
    /// with [`PoolReads::deadline`], a claimed search's may be among them.
    async fn deadlines_after(
        &self,
        mode: &ModeKey,
        after: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError>;

    /// The ticket id of `player_id`'s live search in `mode`, if any (for
    /// `PLAYER_ALREADY_SEARCHING` at ticket generation and for ending all of a
    /// player's searches).
    async fn live_ticket_of_player(
        &self,
        mode: &ModeKey,
        player_id: &str,
    ) -> Result<Option<String>, PoolError>;

    /// The names of `project_id`'s modes that have live searches, sorted
    /// (to end all of a player's searches, or fail those of a deleted mode).
    async fn modes_with_searches(&self, project_id: &str) -> Result<Vec<String>, PoolError>;

    /// How many live searches `project_id` has, over all its modes.
    async fn count_live(&self, project_id: &str) -> Result<u64, PoolError>;

    /// Every project with live searches, sorted: also one the database no
    /// longer has (deleted), so the worker finds every pool. A search added
    /// while this runs is listed by the next call at the latest.
    async fn projects_with_searches(&self) -> Result<Vec<String>, PoolError>;
}

/// Taking groups of searches into matches (docs/architecture.md), under the mode's
/// lease ([`Leases`]), each match recorded in the mode's [`Outbox`].
#[async_trait::async_trait]
pub trait Claims: Send + Sync {
    /// Claims a group atomically (docs/architecture.md): if `lease_token` is not `mode`'s
    /// current lease fencing token, nothing happens
    /// ([`ClaimOutcome::LeaseLost`]); if any ticket is no longer live, nothing
    /// is claimed ([`ClaimOutcome::Conflict`] lists those); otherwise every
    /// search leaves the pool as matched and the match record is appended to
    /// `mode`'s outbox, all in one step.
    ///
    /// Errors: [`PoolError::InvalidClaim`] for an empty group, a ticket
    /// listed twice, or more than 1 000 tickets.
    async fn claim(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claim: &Claim,
    ) -> Result<ClaimOutcome, PoolError>;

    /// Claims many groups (a cycle's matches) at once: the same rules as
    /// [`Claims::claim`] for each group on its own (one group's conflict
    /// takes nothing from the others; a ticket listed by two groups goes to
    /// the first), and one outcome per group, in order. Under a stale
    /// fencing token every outcome is [`ClaimOutcome::LeaseLost`].
    ///
    /// The default claims one group after the other; the Redis store runs
    /// one script per batch of groups (thousands of searches per run).
    ///
    /// Errors: [`PoolError::InvalidClaim`] if any group is invalid (then
    /// nothing is claimed), or a store failure (groups of batches already
    /// run stay claimed, their records in the outbox).
    async fn claim_many(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claims: &[Claim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        for claim in claims {
            types::check_claim(claim)?;
        }
        let mut outcomes = Vec::with_capacity(claims.len());
        for claim in claims {
            outcomes.push(self.claim(mode, lease_token, claim).await?);
        }
        Ok(outcomes)
    }
}

/// How long a search's ended record is kept by default (status reads,
/// `TICKET_ALREADY_MATCHED`): a day, on both pool stores (Redis:
/// [`redis::RedisPoolConfig::ended_retention`]).
pub const ENDED_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// The most tickets one [`PoolReads::deadlines_after`] answers.
pub const MAX_DEADLINES_READ: usize = 10_000;

/// A mode's match records between the claim and PostgreSQL: each stays
/// until a consumer acknowledges it, and a dead consumer's are taken over.
#[async_trait::async_trait]
pub trait Outbox: Send + Sync {
    /// Up to `count` match records of `mode`'s outbox for `consumer`: first
    /// the entries delivered to `consumer` and not acknowledged (a store
    /// that failed is tried again at its next read), then entries
    /// delivered to another consumer but not acknowledged for at least
    /// `min_idle` (a dead consumer's work is taken over), then new ones.
    /// An entry stays in the outbox until [`Outbox::ack_outbox`].
    async fn read_outbox(
        &self,
        mode: &ModeKey,
        consumer: &str,
        count: usize,
        min_idle: Duration,
    ) -> Result<Vec<OutboxEntry>, PoolError>;

    /// Acknowledges (and deletes) outbox entries once their matches are
    /// stored. Returns how many were still pending.
    async fn ack_outbox(&self, mode: &ModeKey, ids: &[String]) -> Result<u64, PoolError>;
}

/// A ticket's status messages, from whichever process changed the search
/// to whichever holds the client's socket.
#[async_trait::async_trait]
pub trait StatusBus: Send + Sync {
    /// Publishes a status message (JSON text) to every subscriber of
    /// `ticket_id`, in any process. Fire and forget: a message published while
    /// nobody listens is gone, so a subscriber reads the current state after
    /// subscribing.
    async fn publish_status(&self, ticket_id: &str, json: &str) -> Result<(), PoolError>;

    /// Subscribes to `ticket_id`'s status messages. The subscription is in
    /// force when this returns.
    async fn subscribe_status(&self, ticket_id: &str) -> Result<StatusStream, PoolError>;
}
