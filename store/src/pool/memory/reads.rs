//! What the pools hold, read under the lock.

use async_trait::async_trait;

use super::MemoryPoolStore;
use crate::pool::{LiveSearch, ModeKey, PoolError, PoolReads, Search, SearchState};

#[async_trait]
impl PoolReads for MemoryPoolStore {
    async fn snapshot(&self, mode: &ModeKey) -> Result<Vec<Search>, PoolError> {
        let state = self.state();
        Ok(state
            .modes
            .get(mode)
            .map(|pool| {
                pool.pool
                    .values()
                    .filter(|s| !pool.proposed.contains_key(s.ticket_id.as_str()))
                    .map(|s| pool.with_ping(s))
                    .collect()
            })
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
                socket: pool.sockets.contains(ticket_id),
            })));
        }
        Ok(pool.ended.get(ticket_id).cloned().map(SearchState::Ended))
    }

    async fn deadline(&self, mode: &ModeKey, ticket_id: &str) -> Result<Option<f64>, PoolError> {
        let state = self.state();
        Ok(state
            .modes
            .get(mode)
            .and_then(|pool| pool.deadlines.get(ticket_id).copied()))
    }

    async fn deadlines_after(
        &self,
        mode: &ModeKey,
        after: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let state = self.state();
        let Some(pool) = state.modes.get(mode) else {
            return Ok(Vec::new());
        };
        Ok(pool
            .deadlines
            .iter()
            .filter(|(_, deadline)| **deadline > after)
            .map(|(ticket, _)| ticket.clone())
            .take(limit.min(crate::pool::MAX_DEADLINES_READ))
            .collect())
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

    async fn projects_with_searches(&self) -> Result<Vec<String>, PoolError> {
        let state = self.state();
        let mut projects: Vec<String> = state
            .modes
            .iter()
            .filter(|(_, pool)| !pool.pool.is_empty())
            .map(|(key, _)| key.project_id.clone())
            .collect();
        projects.sort();
        projects.dedup();
        Ok(projects)
    }
}
