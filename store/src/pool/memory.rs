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
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::types::{check_claim, median, wall_clock, MAX_CLAIM};
use super::{
    AddSearchError, Claim, ClaimOutcome, EndOutcome, EndResult, Ended, EndedSearch, LiveSearch,
    ModeKey, OutboxEntry, PoolError, PoolStore, Search, SearchState, StatusStream,
};

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
}

#[derive(Default)]
struct ModeState {
    /// ticketId → live search (with `ping_ms` unset; see `pings`).
    pool: HashMap<String, Search>,
    players: HashMap<String, String>,
    deadlines: HashMap<String, f64>,
    pings: HashMap<String, Vec<f64>>,
    reasons: HashMap<String, String>,
    ended: HashMap<String, EndedSearch>,
    lease: Option<Lease>,
    fence: u64,
    outbox: BTreeMap<u64, OutboxItem>,
    outbox_seq: u64,
}

struct Lease {
    token: u64,
    expires: Instant,
}

struct OutboxItem {
    match_id: String,
    record_json: String,
    /// When it was last handed to a consumer; `None` while never read.
    delivered: Option<Instant>,
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

    fn decrease_live(&mut self, project_id: &str, n: u64) {
        if let Some(live) = self.live.get_mut(project_id) {
            *live = live.saturating_sub(n);
        }
    }
}

#[async_trait]
impl PoolStore for MemoryPoolStore {
    async fn add_search(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
    ) -> Result<(), AddSearchError> {
        let mut state = self.state();
        let live = state.live.get(&mode.project_id).copied().unwrap_or(0);
        let pool = state.mode(mode);
        if pool.pool.contains_key(search.ticket_id.as_str()) {
            return Err(AddSearchError::SearchAlreadyActive);
        }
        if let Some(Ended::Matched { .. }) =
            pool.ended.get(search.ticket_id.as_str()).map(|e| &e.how)
        {
            return Err(AddSearchError::TicketAlreadyMatched);
        }
        if let Some(ticket_id) = pool.players.get(search.player_id.as_str()) {
            return Err(AddSearchError::PlayerAlreadySearching {
                ticket_id: ticket_id.clone(),
            });
        }
        if let Some(limit) = max_live.filter(|limit| live >= *limit) {
            return Err(AddSearchError::QuotaExceeded { limit });
        }
        let ticket = search.ticket_id.to_string();
        pool.pool.insert(
            ticket.clone(),
            Search {
                ping_ms: None,
                ..search.clone()
            },
        );
        pool.players
            .insert(search.player_id.to_string(), ticket.clone());
        pool.deadlines.insert(ticket.clone(), deadline);
        pool.ended.remove(&ticket);
        *state.live.entry(mode.project_id.clone()).or_default() += 1;
        Ok(())
    }

    async fn end_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        outcome: &EndOutcome,
    ) -> Result<EndResult, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.remove(ticket_id, EndedSearch::of(outcome, wall_clock())) {
            state.decrease_live(&mode.project_id, 1);
            return Ok(EndResult::Ended);
        }
        Ok(match pool.ended.get(ticket_id).map(|e| &e.how) {
            Some(Ended::Matched { match_id }) => EndResult::Matched {
                match_id: match_id.clone(),
            },
            _ => EndResult::NotLive,
        })
    }

    async fn touch_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        deadline: f64,
    ) -> Result<bool, PoolError> {
        let mut state = self.state();
        Ok(match state.mode(mode).deadlines.get_mut(ticket_id) {
            Some(d) => {
                *d = deadline;
                true
            }
            None => false,
        })
    }

    async fn expire_due(
        &self,
        mode: &ModeKey,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        let mut due: Vec<(f64, String)> = pool
            .deadlines
            .iter()
            .filter(|(_, d)| **d <= now)
            .map(|(t, d)| (*d, t.clone()))
            .collect();
        due.sort_by(|a, b| a.0.total_cmp(&b.0));
        due.truncate(limit.clamp(1, MAX_CLAIM));
        let expired: Vec<String> = due
            .into_iter()
            .filter(|(_, t)| pool.remove(t, EndedSearch::new(Ended::Expired, now)))
            .map(|(_, t)| t)
            .collect();
        state.decrease_live(&mode.project_id, expired.len() as u64);
        Ok(expired)
    }

    async fn snapshot(&self, mode: &ModeKey) -> Result<Vec<Search>, PoolError> {
        let state = self.state();
        Ok(state
            .modes
            .get(mode)
            .map(|pool| pool.pool.values().map(|s| pool.with_ping(s)).collect())
            .unwrap_or_default())
    }

    async fn search_state(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<SearchState>, PoolError> {
        let state = self.state();
        let Some(pool) = state.modes.get(mode) else {
            return Ok(None);
        };
        if let Some(search) = pool.pool.get(ticket_id) {
            return Ok(Some(SearchState::Live(LiveSearch {
                search: pool.with_ping(search),
                deadline: pool
                    .deadlines
                    .get(ticket_id)
                    .copied()
                    .unwrap_or(f64::INFINITY),
                waiting_reason: pool.reasons.get(ticket_id).cloned(),
            })));
        }
        Ok(pool.ended.get(ticket_id).cloned().map(SearchState::Ended))
    }

    async fn live_ticket_of_player(
        &self,
        mode: &ModeKey,
        player_id: &str,
    ) -> Result<Option<String>, PoolError> {
        let state = self.state();
        Ok(state
            .modes
            .get(mode)
            .and_then(|pool| pool.players.get(player_id).cloned()))
    }

    async fn record_ping(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        rtt_ms: f64,
    ) -> Result<Option<f64>, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        if !pool.pool.contains_key(ticket_id) {
            return Ok(None);
        }
        let samples = pool.pings.entry(ticket_id.to_owned()).or_default();
        samples.push(rtt_ms);
        if samples.len() > 5 {
            samples.remove(0);
        }
        Ok(median(samples))
    }

    async fn set_waiting_reasons(
        &self,
        mode: &ModeKey,
        reasons: &[(String, String)],
    ) -> Result<(), PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        for (ticket, reason) in reasons {
            if pool.pool.contains_key(ticket) {
                pool.reasons.insert(ticket.clone(), reason.clone());
            }
        }
        Ok(())
    }

    async fn claim(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claim: &Claim,
    ) -> Result<ClaimOutcome, PoolError> {
        check_claim(claim)?;
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(lease_token) {
            return Ok(ClaimOutcome::LeaseLost);
        }
        let gone: Vec<String> = claim
            .ticket_ids
            .iter()
            .zip(&claim.player_ids)
            .filter(|(t, p)| {
                pool.pool
                    .get(*t)
                    .is_none_or(|search| search.player_id != p.as_str())
            })
            .map(|(t, _)| t.clone())
            .collect();
        if !gone.is_empty() {
            return Ok(ClaimOutcome::Conflict { gone });
        }
        let now = wall_clock();
        for ticket in &claim.ticket_ids {
            pool.remove(
                ticket,
                EndedSearch::new(
                    Ended::Matched {
                        match_id: claim.match_id.clone(),
                    },
                    now,
                ),
            );
        }
        pool.outbox_seq += 1;
        let seq = pool.outbox_seq;
        pool.outbox.insert(
            seq,
            OutboxItem {
                match_id: claim.match_id.clone(),
                record_json: claim.record_json.clone(),
                delivered: None,
            },
        );
        state.decrease_live(&mode.project_id, claim.ticket_ids.len() as u64);
        Ok(ClaimOutcome::Claimed {
            outbox_id: format!("0-{seq}"),
        })
    }

    async fn acquire_lease(
        &self,
        mode: &ModeKey,
        _owner: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now).is_some() {
            return Ok(None);
        }
        pool.fence += 1;
        pool.lease = Some(Lease {
            token: pool.fence,
            expires: now + ttl,
        });
        Ok(Some(pool.fence))
    }

    async fn renew_lease(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<bool, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(token) {
            return Ok(false);
        }
        pool.lease = Some(Lease {
            token,
            expires: now + ttl,
        });
        Ok(true)
    }

    async fn release_lease(&self, mode: &ModeKey, token: u64) -> Result<bool, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(token) {
            return Ok(false);
        }
        pool.lease = None;
        Ok(true)
    }

    async fn read_outbox(
        &self,
        mode: &ModeKey,
        _consumer: &str,
        count: usize,
        min_idle: Duration,
    ) -> Result<Vec<OutboxEntry>, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        let count = count.max(1);
        // Taken over first (idle long enough), then never read, as in Redis.
        let idle = pool
            .outbox
            .iter()
            .filter(|(_, e)| e.delivered.is_some_and(|at| now >= at + min_idle))
            .map(|(seq, _)| *seq);
        let fresh = pool
            .outbox
            .iter()
            .filter(|(_, e)| e.delivered.is_none())
            .map(|(seq, _)| *seq);
        let picked: Vec<u64> = idle.chain(fresh).take(count).collect();
        Ok(picked
            .into_iter()
            .filter_map(|seq| {
                let entry = pool.outbox.get_mut(&seq)?;
                entry.delivered = Some(now);
                Some(OutboxEntry {
                    id: format!("0-{seq}"),
                    match_id: entry.match_id.clone(),
                    record_json: entry.record_json.clone(),
                })
            })
            .collect())
    }

    async fn ack_outbox(&self, mode: &ModeKey, ids: &[String]) -> Result<u64, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        let mut acked = 0;
        for id in ids {
            let seq = id.strip_prefix("0-").and_then(|s| s.parse::<u64>().ok());
            if let Some(entry) = seq.and_then(|seq| pool.outbox.remove(&seq)) {
                acked += u64::from(entry.delivered.is_some());
            }
        }
        Ok(acked)
    }

    async fn publish_status(&self, ticket_id: &str, json: &str) -> Result<(), PoolError> {
        let mut statuses = self.statuses.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = statuses.get(ticket_id) {
            if tx.send(json.to_owned()).is_err() {
                // Nobody listens any more.
                statuses.remove(ticket_id);
            }
        }
        Ok(())
    }

    async fn subscribe_status(&self, ticket_id: &str) -> Result<StatusStream, PoolError> {
        let rx = self
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(ticket_id.to_owned())
            .or_insert_with(|| broadcast::channel(64).0)
            .subscribe();
        Ok(futures::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(message) => return Some((message, rx)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed())
    }

    async fn modes_with_searches(&self, project_id: &str) -> Result<Vec<String>, PoolError> {
        let state = self.state();
        let mut modes: Vec<String> = state
            .modes
            .iter()
            .filter(|(key, pool)| key.project_id == project_id && !pool.pool.is_empty())
            .map(|(key, _)| key.mode.clone())
            .collect();
        modes.sort();
        Ok(modes)
    }

    async fn count_live(&self, project_id: &str) -> Result<u64, PoolError> {
        Ok(self.state().live.get(project_id).copied().unwrap_or(0))
    }
}
