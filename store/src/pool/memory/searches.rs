//! Adding, ending, touching and expiring live searches, and their
//! annotations, each under the one lock.

use async_trait::async_trait;

use super::MemoryPoolStore;
use crate::pool::types::{median, wall_clock, MAX_CLAIM};
use crate::pool::{
    AddSearchError, EndOutcome, EndResult, Ended, EndedSearch, ModeKey, PlayerSearchScope,
    PoolError, Search, Searches,
};

#[async_trait]
impl Searches for MemoryPoolStore {
    async fn recount(&self, _mode: &ModeKey) -> Result<(), PoolError> {
        // One process, each change whole: the count never trails the pool.
        Ok(())
    }

    async fn revoke_ticket(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        expires_at: f64,
    ) -> Result<bool, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.pool.contains_key(ticket_id) || pool.ended.contains_key(ticket_id) {
            return Ok(false);
        }
        let now = wall_clock();
        pool.revoked.insert(ticket_id.to_owned(), expires_at);
        pool.revoked.retain(|_, expiry| *expiry > now);
        Ok(true)
    }

    async fn add_search_scoped(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
        scope: PlayerSearchScope,
        socket: bool,
    ) -> Result<(), AddSearchError> {
        let mut state = self.state();
        if scope == PlayerSearchScope::Project {
            if let Some((game_mode, ticket_id)) =
                state.live_search_elsewhere(mode, search.player_id.as_str())
            {
                return Err(AddSearchError::PlayerAlreadySearching {
                    ticket_id,
                    game_mode,
                });
            }
        }
        let live = state.live.get(&mode.project_id).copied().unwrap_or(0);
        let pool = state.mode(mode);
        if pool.revoked.contains_key(search.ticket_id.as_str()) {
            return Err(AddSearchError::TicketRevoked);
        }
        // A proposal closing after its member's search ended holds the
        // ticket and its player until it is closed; then the cooldown it
        // wrote does (as the Redis add script).
        if let Some(m) = pool.proposed.get(search.ticket_id.as_str()) {
            if pool.proposals.contains_key(m) {
                return Err(AddSearchError::SearchAlreadyActive);
            }
        }
        let player = search.player_id.as_str();
        if let Some((ticket, m)) = pool.leaving.get(player) {
            if pool.proposals.contains_key(m) {
                return Err(AddSearchError::PlayerAlreadySearching {
                    ticket_id: ticket.clone(),
                    game_mode: mode.mode.clone(),
                });
            }
            pool.leaving.remove(player);
        }
        let now = wall_clock();
        if let Some(until) = pool.cooldowns.get(player).filter(|until| **until > now) {
            return Err(AddSearchError::DeclineCooldown {
                retry_after_seconds: (until - now).ceil().max(1.0) as u64,
            });
        }
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
                game_mode: mode.mode.clone(),
            });
        }
        if let Some(limit) = max_live.filter(|limit| live >= *limit) {
            return Err(AddSearchError::QuotaExceeded { limit });
        }
        let ticket = search.ticket_id.to_string();
        // A released match's ticket resumes its first search's wait.
        let queued_at = match pool.ended.get(&ticket) {
            Some(EndedSearch {
                how: Ended::Released { .. },
                queued_at: Some(first),
                ..
            }) => *first,
            _ => search.queued_at,
        };
        pool.pool.insert(
            ticket.clone(),
            Search {
                ping_ms: None,
                queued_at,
                ..search.clone()
            },
        );
        pool.players
            .insert(search.player_id.to_string(), ticket.clone());
        pool.deadlines.insert(ticket.clone(), deadline);
        if socket {
            pool.sockets.insert(ticket.clone());
        }
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
        let player = pool.pool.get(ticket_id).map(|s| s.player_id.to_string());
        if pool.remove(ticket_id, EndedSearch::of(outcome, wall_clock())) {
            if let (Some(player), Some(m)) = (player, pool.proposed.get(ticket_id).cloned()) {
                pool.leaving.insert(player, (ticket_id.to_owned(), m));
            }
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

    async fn expire_due_by(
        &self,
        mode: &ModeKey,
        due_by: f64,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let due_by = due_by.min(now);
        let mut state = self.state();
        let pool = state.mode(mode);
        let mut due: Vec<(f64, String)> = pool
            .deadlines
            .iter()
            // A proposed search waits for its proposal to end.
            .filter(|(t, d)| **d <= due_by && !pool.proposed.contains_key(t.as_str()))
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
}
