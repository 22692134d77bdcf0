//! Starting a search from a stored ticket in one round trip: the start
//! script (`scripts/start_search.lua`) reads the ticket's record, checks the
//! token against it and adds the search, atomically.

use super::keys::{pending_key, ticket_key};
use super::searches::add_reply;
use super::RedisPoolStore;
use crate::pool::{AddSearchError, PoolError};
use crate::tickets::{Hold, StartSearchError, Ticket, TicketStart};

impl RedisPoolStore {
    /// See [`crate::tickets::TicketStore::start_search`]: one EVALSHA.
    pub(crate) async fn start_from_ticket(
        &self,
        start: &TicketStart<'_>,
    ) -> Result<Ticket, StartSearchError> {
        let corrupt = |what: String| StartSearchError::Add(PoolError::Corrupt(what).into());
        let keys = self.keys(start.mode);
        let ended = self.ended_keys(&keys);
        // serde's formatting: the text goes into the pool entry as is.
        let now = serde_json::to_string(&start.now).map_err(|e| corrupt(e.to_string()))?;
        let (via, poll) = match start.hold {
            Hold::Socket => ("ws", 0.0),
            Hold::Polled { poll_seconds } => ("rest", poll_seconds),
        };
        let mut invocation = self.inner.scripts.start.prepare_invoke();
        invocation.key(ticket_key(
            self.prefix(),
            &start.mode.project_id,
            start.ticket_id,
        ));
        for key in keys.add_live(&ended) {
            invocation.key(key);
        }
        invocation.key(pending_key(self.prefix(), &start.mode.project_id));
        invocation
            .arg(start.ticket_id)
            .arg(start.token_hash)
            .arg(&start.mode.mode)
            .arg(now)
            .arg(via)
            .arg(poll)
            .arg(start.max_live.map(|l| l.to_string()).unwrap_or_default())
            .arg(start.scope.as_str());
        let reply: Vec<String> = self
            .invoke_in_project(&start.mode.project_id, &invocation)
            .await
            .map_err(|e| StartSearchError::Add(AddSearchError::Store(e.into())))?;
        match (reply.first().map(String::as_str), reply.get(1)) {
            (Some("ok"), Some(json)) => {
                serde_json::from_str(json).map_err(|e| corrupt(format!("ticket: {e}")))
            }
            (Some("invalid"), _) => Err(StartSearchError::TicketInvalid),
            (Some("layout"), _) => Err(corrupt(format!(
                "ticket {} is not laid out as the start script needs",
                start.ticket_id
            ))),
            _ => Err(add_reply(&reply, start.max_live, "start_search")
                .err()
                .unwrap_or_else(|| PoolError::Corrupt("start_search answered ok".into()).into())
                .into()),
        }
    }
}
