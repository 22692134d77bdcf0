//! Releasing a made match's tickets under the one lock.

use async_trait::async_trait;

use super::MemoryPoolStore;
use crate::pool::releases::{ReleasedTicket, Releases};
use crate::pool::{Ended, EndedSearch, ModeKey, PoolError};

#[async_trait]
impl Releases for MemoryPoolStore {
    async fn release_tickets(
        &self,
        mode: &ModeKey,
        match_id: &str,
        tickets: &[ReleasedTicket],
        now: f64,
    ) -> Result<Vec<String>, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        let mut released = Vec::new();
        for ticket in tickets {
            let Some(ended) = pool.ended.get_mut(&ticket.ticket_id) else {
                continue;
            };
            match &ended.how {
                Ended::Matched { match_id: id } if id == match_id => {
                    *ended = EndedSearch {
                        queued_at: Some(ticket.queued_at),
                        ..EndedSearch::new(
                            Ended::Released {
                                match_id: match_id.to_owned(),
                            },
                            now,
                        )
                    };
                }
                Ended::Released { match_id: id } if id == match_id => {}
                _ => continue,
            }
            released.push(ticket.ticket_id.clone());
        }
        Ok(released)
    }
}
