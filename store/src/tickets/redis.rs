//! Tickets in Redis, beside the pools, on the pool store's connection and
//! under its prefix (so both always agree on the keys).
//!
//! Keys (`P` is the pool store's prefix, `mp` by default; names built in
//! `pool::redis_keys`):
//!
//! - `P:{<projectId>}:ticket:<ticketId>` — STRING, the [`Ticket`] as JSON,
//!   expiring [`super::RECORD_GRACE`] after the ticket. Under the project's
//!   hash tag, like every pool key of the project, so the start script reads
//!   it and adds the search in one Cluster slot.
//! - reads `P:{<projectId>}:<mode>:players` — the pool store's HASH
//!   playerId → live ticketId, so generation refuses a player already
//!   searching, in the same pipelined round trip that stores the ticket.

use async_trait::async_trait;

use super::{keep_seconds, CreateTicketError, StartSearchError, Ticket, TicketStart, TicketStore};
use crate::pool::redis_keys::{players_key, ticket_key};
use crate::pool::{PoolError, RedisPoolStore};

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
    async fn create(&self, ticket: &Ticket, now: f64) -> Result<(), CreateTicketError> {
        let json = serde_json::to_string(ticket).map_err(|e| PoolError::Corrupt(e.to_string()))?;
        // One pipelined round trip, no script: a Lua call costs Redis several
        // times what these two commands do. When the player turns out to be
        // searching, the record just written is unusable (its token is never
        // returned) and is deleted.
        let key = self.ticket_key(&ticket.project_id, &ticket.ticket_id);
        let (live, ()): (Option<String>, ()) = redis::pipe()
            .hget(
                players_key(self.pool.prefix(), &ticket.project_id, &ticket.game_mode),
                &ticket.player_id,
            )
            .set_ex(&key, json, keep_seconds(ticket, now))
            .query_async(&mut self.pool.conn())
            .await
            .map_err(PoolError::from)?;
        match live {
            None => Ok(()),
            Some(ticket_id) => {
                let _: i64 = redis::cmd("DEL")
                    .arg(&key)
                    .query_async(&mut self.pool.conn())
                    .await
                    .map_err(PoolError::from)?;
                Err(CreateTicketError::PlayerAlreadySearching { ticket_id })
            }
        }
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
