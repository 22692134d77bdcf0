//! Backfills in memory: each change under the one lock, the fill with its
//! searches' claim in the same step.

use async_trait::async_trait;
use tokio::time::Instant;

use super::{MemoryPoolStore, OutboxItem};
use crate::pool::backfills::{check_fill, seats_after};
use crate::pool::types::wall_clock;
use crate::pool::{
    BackfillChange, BackfillStatus, Backfills, Ended, EndedSearch, FillClaim, FillOutcome,
    LiveBackfill, ModeKey, OpenBackfill, PoolError,
};

#[async_trait]
impl Backfills for MemoryPoolStore {
    async fn open_backfill(
        &self,
        mode: &ModeKey,
        backfill: &OpenBackfill,
    ) -> Result<bool, PoolError> {
        let mut state = self.state();
        let backfills = &mut state.mode(mode).backfills;
        if backfills.contains_key(backfill.backfill_id.as_str()) {
            return Ok(false);
        }
        backfills.insert(
            backfill.backfill_id.to_string(),
            LiveBackfill {
                backfill: backfill.clone(),
                status: BackfillStatus::Open,
            },
        );
        Ok(true)
    }

    async fn replace_backfill(
        &self,
        mode: &ModeKey,
        backfill: &OpenBackfill,
    ) -> Result<BackfillChange, PoolError> {
        let mut state = self.state();
        let Some(live) = state
            .mode(mode)
            .backfills
            .get_mut(backfill.backfill_id.as_str())
        else {
            return Ok(BackfillChange::Unknown);
        };
        if live.status != BackfillStatus::Open {
            return Ok(BackfillChange::NotOpen(live.status));
        }
        let revision = live.backfill.revision + 1;
        live.backfill = OpenBackfill {
            revision,
            ..backfill.clone()
        };
        Ok(BackfillChange::Changed { revision })
    }

    async fn close_backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
    ) -> Result<BackfillChange, PoolError> {
        let mut state = self.state();
        let Some(live) = state.mode(mode).backfills.get_mut(backfill_id) else {
            return Ok(BackfillChange::Unknown);
        };
        if live.status != BackfillStatus::Open {
            return Ok(BackfillChange::NotOpen(live.status));
        }
        live.status = BackfillStatus::Closed;
        live.backfill.revision += 1;
        Ok(BackfillChange::Changed {
            revision: live.backfill.revision,
        })
    }

    async fn backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
    ) -> Result<Option<LiveBackfill>, PoolError> {
        Ok(self.state().mode(mode).backfills.get(backfill_id).cloned())
    }

    async fn open_backfills(&self, mode: &ModeKey) -> Result<Vec<OpenBackfill>, PoolError> {
        Ok(self
            .state()
            .mode(mode)
            .backfills
            .values()
            .filter(|b| b.status == BackfillStatus::Open)
            .map(|b| b.backfill.clone())
            .collect())
    }

    async fn forget_backfill(&self, mode: &ModeKey, backfill_id: &str) -> Result<(), PoolError> {
        self.state().mode(mode).backfills.remove(backfill_id);
        Ok(())
    }

    async fn claim_fill(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        fill: &FillClaim,
        now: f64,
    ) -> Result<FillOutcome, PoolError> {
        check_fill(fill)?;
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(Instant::now()) != Some(lease_token) {
            return Ok(FillOutcome::LeaseLost);
        }
        let Some(live) = pool.backfills.get(&fill.backfill_id) else {
            return Ok(FillOutcome::Stale);
        };
        let left = seats_after(&live.backfill.seat_counters(), &fill.counters_taken());
        let usable = live.status == BackfillStatus::Open
            && live.backfill.revision == fill.revision
            && now < live.backfill.expires_at;
        let Some(left) = left.filter(|_| usable) else {
            return Ok(FillOutcome::Stale);
        };
        let claim = &fill.claim;
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
            return Ok(FillOutcome::Conflict { gone });
        }
        let ended_at = wall_clock();
        for ticket in &claim.ticket_ids {
            pool.remove(
                ticket,
                EndedSearch::new(
                    Ended::Matched {
                        match_id: claim.match_id.clone(),
                    },
                    ended_at,
                ),
            );
        }
        let status = if left.iter().all(|s| *s == 0) {
            BackfillStatus::Filled
        } else {
            BackfillStatus::Open
        };
        if let Some(live) = pool.backfills.get_mut(&fill.backfill_id) {
            if let Some(view) = &fill.view_after {
                let revision = live.backfill.revision;
                live.backfill = view.clone();
                live.backfill.revision = revision;
            }
            live.backfill.set_seat_counters(&left);
            live.backfill.revision += 1;
            live.status = status;
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
        Ok(FillOutcome::Claimed {
            outbox_id: format!("0-{seq}"),
            status,
        })
    }
}
