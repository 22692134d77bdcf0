//! Tickets in Redis, beside the pools.
//!
//! Keys (`P` is the prefix shared with the pool store, `mp` by default):
//!
//! - `P:{<projectId>}:ticket:<ticketId>` — STRING, the [`Ticket`] as JSON,
//!   expiring [`super::RECORD_GRACE`] after the ticket. Under the project's
//!   hash tag, like every pool key of the project.
//! - reads `P:{<projectId>}:<mode>:players` — the pool store's HASH
//!   playerId → live ticketId (see `pool::redis_keys`), so generation refuses
//!   a player already searching in the same step that stores the ticket. A
//!   test checks this name against the pool store's own.

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use redis::Script;

use super::{keep_seconds, CreateTicketError, Ticket, TicketStore};
use crate::pool::PoolError;

/// Tickets on Redis. Cheap to clone: clones share one multiplexed connection.
#[derive(Clone)]
pub struct RedisTicketStore {
    conn: ConnectionManager,
    prefix: String,
    create: std::sync::Arc<Script>,
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
            create: std::sync::Arc::new(Script::new(include_str!("scripts/create_ticket.lua"))),
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
        let reply: Vec<String> = self
            .create
            .key(self.players_key(&ticket.project_id, &ticket.game_mode))
            .key(self.ticket_key(&ticket.project_id, &ticket.ticket_id))
            .arg(&ticket.player_id)
            .arg(json)
            .arg(keep_seconds(ticket, now))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(PoolError::from)?;
        match (reply.first().map(String::as_str), reply.get(1)) {
            (Some("ok"), _) => Ok(()),
            (Some("player"), Some(ticket_id)) => Err(CreateTicketError::PlayerAlreadySearching {
                ticket_id: ticket_id.clone(),
            }),
            other => Err(PoolError::Corrupt(format!("create_ticket answered {other:?}")).into()),
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
