//! Tickets in Redis, beside the pools, on the pool store's connection and
//! under its prefix (so both always agree on the keys).
//!
//! Keys (`P` is the pool store's prefix, `mp` by default; names built in
//! `pool::redis::keys`):
//!
//! - `P:{<projectId>}:ticket:<ticketId>` — STRING, the [`Ticket`] as JSON,
//!   expiring [`super::RECORD_GRACE`] after the ticket. Under the project's
//!   hash tag, like every pool key of the project, so the start script reads
//!   it and adds the search in one Cluster slot.
//! - `P:{<projectId>}:pending` — ZSET ticketId → expiry of the project's
//!   pending tickets (see the module doc of `tickets`), expiring a day and
//!   the grace after its last write (the longest ticket TTL).
//! - reads `P:{<projectId>}:<mode>:players` — the pool store's HASH
//!   playerId → live ticketId, so generation refuses a player already
//!   searching, in the same pipelined round trip that stores the ticket.

use async_trait::async_trait;

use super::{keep_seconds, CreateTicketError, StartSearchError, Ticket, TicketStart, TicketStore};
use crate::pool::redis::keys::{pending_key, players_key, ticket_key};
use crate::pool::{PoolError, RedisPoolStore};

/// Lifetime of a project's pending set after its last write (seconds): the
/// longest ticket TTL plus the record grace, so it outlives every member.
const PENDING_SET_TTL_SECONDS: i64 = matchplane_matchmaker::validation::MAX_TICKET_TTL_SECONDS
    as i64
    + super::RECORD_GRACE.as_secs() as i64;

/// Tickets on Redis. Cheap to clone: clones share the pool store's
/// multiplexed connection.
#[derive(Clone)]
pub struct RedisTicketStore {
    pool: RedisPoolStore,
}

impl RedisTicketStore {
    /// Tickets beside `pool`'s pools: its connection, its prefix.
    pub fn new(pool: RedisPoolStore) -> Self {
        Self { pool }
    }

    fn ticket_key(&self, project_id: &str, ticket_id: &str) -> String {
        ticket_key(self.pool.prefix(), project_id, ticket_id)
    }
}

#[async_trait]
impl TicketStore for RedisTicketStore {
    async fn create_within(
        &self,
        ticket: &Ticket,
        now: f64,
        max_pending: Option<u64>,
    ) -> Result<(), CreateTicketError> {
        let json = serde_json::to_string(ticket).map_err(|e| PoolError::Corrupt(e.to_string()))?;
        // One pipelined round trip, no script: a Lua call costs Redis several
        // times what these commands do. The ticket counts itself among the
        // project's pending ones (after the expired ones are trimmed); when
        // the player turns out to be searching, or the count is over the
        // limit, the record just written is unusable (its token is never
        // returned) and is taken out again.
        let key = self.ticket_key(&ticket.project_id, &ticket.ticket_id);
        let pending = pending_key(self.pool.prefix(), &ticket.project_id);
        let (live, (), _trimmed, _added, count, _ttl): (Option<String>, (), i64, i64, u64, i64) =
            redis::pipe()
                .hget(
                    players_key(self.pool.prefix(), &ticket.project_id, &ticket.game_mode),
                    &ticket.player_id,
                )
                .set_ex(&key, json, keep_seconds(ticket, now))
                .zrembyscore(&pending, "-inf", now)
                .zadd(&pending, &ticket.ticket_id, ticket.expires_at)
                .zcard(&pending)
                .expire(&pending, PENDING_SET_TTL_SECONDS)
                .query_async(&mut self.pool.conn())
                .await
                .map_err(PoolError::from)?;
        let refusal = match (live, max_pending) {
            (Some(ticket_id), _) => CreateTicketError::PlayerAlreadySearching { ticket_id },
            (None, Some(limit)) if count > limit => CreateTicketError::LimitExceeded { limit },
            (None, _) => return Ok(()),
        };
        let () = redis::pipe()
            .del(&key)
            .ignore()
            .zrem(&pending, &ticket.ticket_id)
            .ignore()
            .query_async(&mut self.pool.conn())
            .await
            .map_err(PoolError::from)?;
        Err(refusal)
    }

    async fn forget_pending(&self, project_id: &str, ticket_id: &str) -> Result<(), PoolError> {
        let _: i64 = redis::cmd("ZREM")
            .arg(pending_key(self.pool.prefix(), project_id))
            .arg(ticket_id)
            .query_async(&mut self.pool.conn())
            .await?;
        Ok(())
    }

    async fn pending(&self, project_id: &str, now: f64) -> Result<u64, PoolError> {
        let key = pending_key(self.pool.prefix(), project_id);
        let count: u64 = redis::cmd("ZCOUNT")
            .arg(&key)
            .arg(format!("({now}"))
            .arg("+inf")
            .query_async(&mut self.pool.conn())
            .await?;
        Ok(count)
    }

    async fn get(&self, project_id: &str, ticket_id: &str) -> Result<Option<Ticket>, PoolError> {
        let json: Option<String> = redis::cmd("GET")
            .arg(self.ticket_key(project_id, ticket_id))
            .query_async(&mut self.pool.conn())
            .await?;
        json.map(|j| {
            serde_json::from_str(&j).map_err(|e| PoolError::Corrupt(format!("ticket: {e}")))
        })
        .transpose()
    }

    async fn start_search(&self, start: &TicketStart<'_>) -> Result<Ticket, StartSearchError> {
        self.pool.start_from_ticket(start).await
    }

    async fn ping(&self) -> Result<(), PoolError> {
        let _: String = redis::cmd("PING")
            .query_async(&mut self.pool.conn())
            .await?;
        Ok(())
    }

    fn live_store(&self) -> &'static str {
        "redis"
    }
}
