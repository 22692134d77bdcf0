//! What the pools hold: a snapshot (HVALS and HGETALL, pipelined), a
//! ticket's state (its pool entry, annotations and ended buckets in one
//! pipeline), the project's set of modes and live counter, and the
//! registry of projects with searches (`projects.rs`).

use async_trait::async_trait;
use redis::AsyncCommands;

use super::keys::ProjectKeys;
use super::{parse_ended, parse_ping, parse_search, RedisPoolStore};
use crate::pool::{LiveSearch, ModeKey, PoolError, PoolReads, Search, SearchState};

#[async_trait]
impl PoolReads for RedisPoolStore {
    async fn snapshot(&self, mode: &ModeKey) -> Result<Vec<Search>, PoolError> {
        let keys = self.keys(mode);
        type Row = (
            Vec<String>,
            std::collections::HashMap<String, String>,
            std::collections::HashSet<String>,
        );
        let (values, pings, proposed): Row = redis::pipe()
            .hvals(&keys.pool)
            .hgetall(&keys.pings)
            .hkeys(&keys.proposed)
            .query_async(&mut self.conn())
            .await?;
        let mut searches = Vec::with_capacity(values.len());
        for json in &values {
            let mut search = parse_search(json)?;
            // Held by an open proposal: nobody else may be matched with it.
            if proposed.contains(search.ticket_id.as_str()) {
                continue;
            }
            if let Some(samples) = pings.get(search.ticket_id.as_str()) {
                search.ping_ms = parse_ping(samples)?;
            }
            searches.push(search);
        }
        Ok(searches)
    }

    async fn search_state(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<SearchState>, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        type Row = (
            Option<String>,
            Option<f64>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let (search, deadline, pings, reason, in_next, in_current, in_previous): Row =
            redis::pipe()
                .hget(&keys.pool, ticket_id)
                .zscore(&keys.deadlines, ticket_id)
                .hget(&keys.pings, ticket_id)
                .hget(&keys.reasons, ticket_id)
                .hget(next, ticket_id)
                .hget(current, ticket_id)
                .hget(previous, ticket_id)
                .query_async(&mut self.conn())
                .await?;
        // The newest bucket that has it, as the scripts read them.
        let ended = in_next.or(in_current).or(in_previous);
        if let Some(json) = search {
            let mut search = parse_search(&json)?;
            if let Some(samples) = pings {
                search.ping_ms = parse_ping(&samples)?;
            }
            return Ok(Some(SearchState::Live(LiveSearch {
                search,
                deadline: deadline.unwrap_or(f64::INFINITY),
                waiting_reason: reason,
                socket: json.ends_with(super::start::SOCKET_MARK),
            })));
        }
        ended
            .map(|json| parse_ended(&json).map(SearchState::Ended))
            .transpose()
    }

    async fn deadline(&self, mode: &ModeKey, ticket_id: &str) -> Result<Option<f64>, PoolError> {
        let keys = self.keys(mode);
        Ok(self.conn().zscore(&keys.deadlines, ticket_id).await?)
    }

    async fn deadlines_after(
        &self,
        mode: &ModeKey,
        after: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let keys = self.keys(mode);
        let limit = limit.min(crate::pool::MAX_DEADLINES_READ);
        let limit = isize::try_from(limit).unwrap_or(isize::MAX);
        let after = format!("({after}");
        Ok(self
            .conn()
            .zrangebyscore_limit(&keys.deadlines, after, "+inf", 0, limit)
            .await?)
    }

    async fn live_ticket_of_player(
        &self,
        mode: &ModeKey,
        player_id: &str,
    ) -> Result<Option<String>, PoolError> {
        let keys = self.keys(mode);
        Ok(self.conn().hget(&keys.players, player_id).await?)
    }

    async fn modes_with_searches(&self, project_id: &str) -> Result<Vec<String>, PoolError> {
        // The adds of this process register their modes in their batched
        // step 3 (see `lane`): those queued are read too.
        let _waited = self.settle(project_id).await;
        let mut modes: Vec<String> = self
            .conn()
            .hkeys(ProjectKeys::new(&self.inner.prefix, project_id).counts)
            .await?;
        modes.sort();
        Ok(modes)
    }

    async fn count_live(&self, project_id: &str) -> Result<u64, PoolError> {
        let _waited = self.settle(project_id).await;
        let live: Option<i64> = self
            .conn()
            .get(ProjectKeys::new(&self.inner.prefix, project_id).live)
            .await?;
        Ok(live.unwrap_or(0).max(0) as u64)
    }

    async fn projects_with_searches(&self) -> Result<Vec<String>, PoolError> {
        self.listed_projects().await
    }
}
