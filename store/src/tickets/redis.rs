//! Tickets in Redis, beside the pools.
//!
//! Keys (`P` is the prefix shared with the pool store, `mp` by default):
//!
//! - `P:{<projectId>}:ticket:<ticketId>` — STRING, the [`Ticket`] as JSON,
//!   expiring [`super::RECORD_GRACE`] after the ticket. Under the project's
//!   hash tag, like every pool key of the project.
//! - reads `P:{<projectId>}:<mode>:players` — the pool store's HASH
//!   playerId → live ticketId (see `pool::redis_keys`), so generation refuses
//!   a player already searching, in the same pipelined round trip that
//!   stores the ticket. A test checks this name against the pool store's.

use async_trait::async_trait;
use redis::aio::ConnectionManager;

use super::{keep_seconds, CreateTicketError, Ticket, TicketStore};
use crate::pool::PoolError;

/// Tickets on Redis. Cheap to clone: clones share one multiplexed connection.
#[derive(Clone)]
pub struct RedisTicketStore {
    conn: ConnectionManager,
    prefix: String,
}

impl RedisTicketStore {
    /// Connects to `url` (one multiplexed connection, reconnecting by
    /// itself); `prefix` must be the pool store's.
    pub async fn connect(url: &str, prefix: impl Into<String>) -> Result<Self, PoolError> {
        let client = redis::Client::open(url)?;
        let conn = ConnectionManager::new(client).await?;
        Ok(Self {
            conn,
            prefix: prefix.into(),
        })
    }

    fn ticket_key(&self, project_id: &str, ticket_id: &str) -> String {
        format!("{}:{{{project_id}}}:ticket:{ticket_id}", self.prefix)
    }

    fn players_key(&self, project_id: &str, mode: &str) -> String {
        format!("{}:{{{project_id}}}:{mode}:players", self.prefix)
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
                self.players_key(&ticket.project_id, &ticket.game_mode),
                &ticket.player_id,
            )
            .set_ex(&key, json, keep_seconds(ticket, now))
            .query_async(&mut self.conn.clone())
            .await
            .map_err(PoolError::from)?;
        match live {
            None => Ok(()),
            Some(ticket_id) => {
                let _: i64 = redis::cmd("DEL")
                    .arg(&key)
                    .query_async(&mut self.conn.clone())
                    .await
                    .map_err(PoolError::from)?;
                Err(CreateTicketError::PlayerAlreadySearching { ticket_id })
            }
        }
    }

    async fn get(&self, project_id: &str, ticket_id: &str) -> Result<Option<Ticket>, PoolError> {
        let json: Option<String> = redis::cmd("GET")
            .arg(self.ticket_key(project_id, ticket_id))
            .query_async(&mut self.conn.clone())
            .await?;
        json.map(|j| {
            serde_json::from_str(&j).map_err(|e| PoolError::Corrupt(format!("ticket: {e}")))
        })
        .transpose()
    }

    async fn ping(&self) -> Result<(), PoolError> {
        let _: String = redis::cmd("PING")
            .query_async(&mut self.conn.clone())
            .await?;
        Ok(())
    }
}
