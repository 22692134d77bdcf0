//! The in-process pool store of `matchplane dev`: the same rules as Redis
//! (the conformance suite runs on both), kept in one mutex-guarded map.
//!
//! Every operation takes the one lock for its whole step, which is what makes
//! it atomic, as a Lua script is in Redis. Lease expiry and outbox idle times
//! use tokio's clock (so tests may pause it). Ended records are kept for
//! [`ENDED_KEEP_SECONDS`] after their end, as the Redis store keeps them by
//! default; status messages go through one [`broadcast`] channel per
//! ticket.

use std::collections::{BTreeMap, HashMap, VecDeque};
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

/// How long a search's ended record is kept after its end (seconds): the
/// Redis store's default, [`crate::pool::ENDED_RETENTION`]. Without a
/// bound, a long-running `dev` process grew by about a kilobyte for every
/// search it had ever ended.
pub const ENDED_KEEP_SECONDS: f64 = super::ENDED_RETENTION.as_secs() as f64;

/// The in-process pool store.
#[derive(Default)]
pub struct MemoryPoolStore {
    state: Mutex<State>,
    statuses: Mutex<Statuses>,
}

/// The status channels by ticket, and how many there were after the last
/// sweep of those nobody listens to any more (see `status.rs`).
#[derive(Default)]
struct Statuses {
    channels: HashMap<String, broadcast::Sender<String>>,
    swept_len: usize,
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
    /// `(ended_at, ticketId)` of every ended record, oldest first: what
    /// [`ModeState::remove`] prunes past [`ENDED_KEEP_SECONDS`].
    ended_order: VecDeque<(f64, String)>,
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
    /// playerId → (ticketId, matchId) of a search that ended while in an
    /// open proposal, until the proposal closes: the add refuses the
    /// player meanwhile (see the Redis store's `leaving` key).
    leaving: HashMap<String, (String, String)>,
    /// ticketId → expiry (Unix seconds) of the tickets revoked before a
    /// search started with them, which the add refuses (see
    /// `Searches::revoke_ticket`).
    revoked: HashMap<String, f64>,
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
        if let Some(at) = ended.ended_at {
            self.prune_ended(at - ENDED_KEEP_SECONDS);
            self.ended_order.push_back((at, ticket_id.to_owned()));
        }
        self.ended.insert(ticket_id.to_owned(), ended);
        true
    }

    /// Forgets the ended records that ended before `before` (Unix
    /// seconds), unless their ticket ended again since.
    fn prune_ended(&mut self, before: f64) {
        while self.ended_order.front().is_some_and(|(at, _)| *at < before) {
            let Some((at, ticket)) = self.ended_order.pop_front() else {
                break;
            };
            if self.ended.get(&ticket).and_then(|e| e.ended_at) == Some(at) {
                self.ended.remove(&ticket);
                // Its last proposal's answer goes with it.
                self.answers.remove(&ticket);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::{MemoryPoolStore, ENDED_KEEP_SECONDS};
    use crate::pool::conformance::{mode, solo};
    use crate::pool::{PoolReads, SearchState, Searches};

    /// An ended record is read for a day after its end, then forgotten
    /// when a later search of the mode ends (a long-running `dev` process
    /// kept every one it ever ended).
    #[tokio::test]
    async fn ended_records_are_kept_for_a_day() {
        let store = MemoryPoolStore::new();
        let duel = mode("duel");
        store
            .add_search(&duel, &solo("t1", "p1"), 10.0, None)
            .await
            .unwrap();
        assert_eq!(store.expire_due(&duel, 20.0, 10).await.unwrap(), ["t1"]);
        let later = 20.0 + ENDED_KEEP_SECONDS;
        store
            .add_search(&duel, &solo("t2", "p2"), later, None)
            .await
            .unwrap();
        assert_eq!(store.expire_due(&duel, later, 10).await.unwrap(), ["t2"]);
        // Ended exactly a day before the next end: still kept.
        let state = store.search_state(&duel, "t1").await.unwrap();
        assert!(matches!(state, Some(SearchState::Ended(_))), "{state:?}");
        let last = later + 1.0;
        store
            .add_search(&duel, &solo("t3", "p3"), last, None)
            .await
            .unwrap();
        assert_eq!(store.expire_due(&duel, last, 10).await.unwrap(), ["t3"]);
        assert_eq!(store.search_state(&duel, "t1").await.unwrap(), None);
        let state = store.search_state(&duel, "t2").await.unwrap();
        assert!(matches!(state, Some(SearchState::Ended(_))), "{state:?}");
    }
}
