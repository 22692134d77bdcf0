//! The in-process pool store of `matchplane dev`: the same rules as Redis
//! (the conformance suite runs on both), kept in one mutex-guarded map.
//!
//! Every operation takes the one lock for its whole step, which is what makes
//! it atomic, as a Lua script is in Redis. Lease expiry and outbox idle times
//! use tokio's clock (so tests may pause it). Ended records are kept until
//! the process stops (a dev process is short-lived); status messages go
//! through one [`broadcast`] channel per ticket.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use tokio::sync::broadcast;
use tokio::time::Instant;

use super::types::median;
use super::{EndedSearch, ModeKey, Search};

mod backfills;
mod claims;
mod leases;
mod outbox;
mod proposals;
mod reads;
mod releases;
mod searches;
mod status;

/// The in-process pool store.
#[derive(Default)]
pub struct MemoryPoolStore {
    state: Mutex<State>,
    statuses: Mutex<HashMap<String, broadcast::Sender<String>>>,
}

#[derive(Default)]
struct State {
    modes: HashMap<ModeKey, ModeState>,
    /// Live searches per project.
    live: HashMap<String, u64>,
    /// workerId → when its heartbeat lapses.
    workers: HashMap<String, Instant>,
}

#[derive(Default)]
struct ModeState {
    /// ticketId → live search (with `ping_ms` unset; see `pings`).
    pool: HashMap<String, Search>,
    players: HashMap<String, String>,
    deadlines: HashMap<String, f64>,
    pings: HashMap<String, Vec<f64>>,
    reasons: HashMap<String, String>,
    /// ticketIds of the live searches a WebSocket holds.
    sockets: std::collections::HashSet<String>,
    ended: HashMap<String, EndedSearch>,
    lease: Option<Lease>,
    fence: u64,
    /// The mode's hold as a worker last read it (`Leases::keep_hold`).
    held: Option<bool>,
    outbox: BTreeMap<u64, OutboxItem>,
    outbox_seq: u64,
    /// matchId → open proposal.
    proposals: HashMap<String, proposals::OpenProposal>,
    /// ticketId → matchId of its open proposal.
    proposed: HashMap<String, String>,
    /// ticketId → (matchId, answer) of its last proposal (`Pending`,
    /// `Accept` or `Decline`), kept after it closed.
    answers: HashMap<String, (String, matchplane_matchmaker::acceptance::Answer)>,
    /// playerId → end of its decline cooldown (Unix seconds).
    cooldowns: HashMap<String, f64>,
    /// backfillId → its live state (see `backfills`).
    backfills: HashMap<String, super::LiveBackfill>,
}

struct Lease {
    token: u64,
    expires: Instant,
}

struct OutboxItem {
    match_id: String,
    record_json: String,
    /// When it was last handed to a consumer, and to which; `None` while
    /// never read.
    delivered: Option<(Instant, String)>,
}

impl ModeState {
    fn lease_token(&self, now: Instant) -> Option<u64> {
        self.lease
            .as_ref()
            .filter(|l| l.expires > now)
            .map(|l| l.token)
    }

    fn with_ping(&self, search: &Search) -> Search {
        let mut search = search.clone();
        search.ping_ms = self
            .pings
            .get(search.ticket_id.as_str())
            .and_then(|samples| median(samples));
        search
    }

    /// Removes every trace of a live search and records how it ended
    /// (with its `queuedAt`).
    fn remove(&mut self, ticket_id: &str, mut ended: EndedSearch) -> bool {
        let Some(search) = self.pool.remove(ticket_id) else {
            return false;
        };
        if self
            .players
            .get(search.player_id.as_str())
            .map(String::as_str)
            == Some(ticket_id)
        {
            self.players.remove(search.player_id.as_str());
        }
        self.deadlines.remove(ticket_id);
        self.pings.remove(ticket_id);
        self.reasons.remove(ticket_id);
        ended.queued_at = Some(search.queued_at);
        ended.socket = self.sockets.remove(ticket_id);
        self.ended.insert(ticket_id.to_owned(), ended);
        true
    }
}

impl MemoryPoolStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn mode(&mut self, mode: &ModeKey) -> &mut ModeState {
        self.modes.entry(mode.clone()).or_default()
    }

    /// `(mode name, ticket id)` of `player_id`'s live search in another
    /// mode of `mode`'s project, the first by mode name (the
    /// `playerSearchScope` `project` check).
    fn live_search_elsewhere(&self, mode: &ModeKey, player_id: &str) -> Option<(String, String)> {
        let mut found: Vec<(String, String)> = self
            .modes
            .iter()
            .filter(|(key, _)| key.project_id == mode.project_id && key.mode != mode.mode)
            .filter_map(|(key, pool)| {
                pool.players
                    .get(player_id)
                    .map(|ticket| (key.mode.clone(), ticket.clone()))
            })
            .collect();
        found.sort();
        found.into_iter().next()
    }

    fn decrease_live(&mut self, project_id: &str, n: u64) {
        if let Some(live) = self.live.get_mut(project_id) {
            *live = live.saturating_sub(n);
        }
    }
}
