//! A claim: the lease check, every search of the group or none, and the
//! outbox entry, under the one lock. `claim_many` is the trait's default
//! (one group after the other).

use async_trait::async_trait;
use tokio::time::Instant;

use super::{MemoryPoolStore, OutboxItem};
use crate::pool::types::{check_claim, wall_clock};
use crate::pool::{Claim, ClaimOutcome, Claims, Ended, EndedSearch, ModeKey, PoolError};

#[async_trait]
impl Claims for MemoryPoolStore {
    async fn claim(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claim: &Claim,
    ) -> Result<ClaimOutcome, PoolError> {
        check_claim(claim)?;
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(lease_token) {
            return Ok(ClaimOutcome::LeaseLost);
        }
        let gone: Vec<String> = claim
            .ticket_ids
            .iter()
            .zip(&claim.player_ids)
            .filter(|(t, p)| {
                pool.pool
                    .get(*t)
                    .is_none_or(|search| search.player_id != p.as_str())
            })
            .map(|(t, _)| t.clone())
            .collect();
        if !gone.is_empty() {
            return Ok(ClaimOutcome::Conflict { gone });
        }
        let now = wall_clock();
        for ticket in &claim.ticket_ids {
            pool.remove(
                ticket,
                EndedSearch::new(
                    Ended::Matched {
                        match_id: claim.match_id.clone(),
                    },
                    now,
                ),
            );
        }
        pool.outbox_seq += 1;
        let seq = pool.outbox_seq;
        pool.outbox.insert(
            seq,
            OutboxItem {
                match_id: claim.match_id.clone(),
                record_json: claim.record_json.clone(),
                delivered: None,
            },
        );
        state.decrease_live(&mode.project_id, claim.ticket_ids.len() as u64);
        Ok(ClaimOutcome::Claimed {
            outbox_id: format!("0-{seq}"),
        })
    }
}
