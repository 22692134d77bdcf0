//! Releasing a made match's tickets (`scripts/release.lua`).

use async_trait::async_trait;

use super::RedisPoolStore;
use crate::pool::releases::{ReleasedTicket, Releases};
use crate::pool::{Ended, EndedSearch, ModeKey, PoolError};

#[async_trait]
impl Releases for RedisPoolStore {
    async fn release_tickets(
        &self,
        mode: &ModeKey,
        match_id: &str,
        tickets: &[ReleasedTicket],
        now: f64,
    ) -> Result<Vec<String>, PoolError> {
        if tickets.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        let mut call = self.inner.scripts.release.prepare_invoke();
        call.key(current).key(next).key(previous);
        call.arg(match_id).arg(self.bucket_lifetime());
        for ticket in tickets {
            let record = EndedSearch {
                queued_at: Some(ticket.queued_at),
                ..EndedSearch::new(
                    Ended::Released {
                        match_id: match_id.to_owned(),
                    },
                    now,
                )
            };
            call.arg(&ticket.ticket_id).arg(self.ended_json(&record)?);
        }
        let released: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        Ok(released)
    }
}
