//! A mode's lease and its fence counter, timed by tokio's clock.

use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{Lease, MemoryPoolStore};
use crate::pool::{Leases, ModeActivity, ModeKey, PoolError, MAX_LEASE_EPOCH};

#[async_trait]
impl Leases for MemoryPoolStore {
    async fn acquire_lease_in_epoch(
        &self,
        mode: &ModeKey,
        _owner: &str,
        epoch: u64,
        ttl: Duration,
    ) -> Result<Option<u64>, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now).is_some() {
            return Ok(None);
        }
        pool.fence = (pool.fence + 1) % (1 << 32);
        let token = ((epoch % MAX_LEASE_EPOCH) << 32) | pool.fence;
        pool.lease = Some(Lease {
            token,
            expires: now + ttl,
        });
        Ok(Some(token))
    }

    async fn renew_lease(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<bool, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(token) {
            return Ok(false);
        }
        pool.lease = Some(Lease {
            token,
            expires: now + ttl,
        });
        Ok(true)
    }

    async fn keep_hold(&self, mode: &ModeKey, held: bool) -> Result<(), PoolError> {
        self.state().mode(mode).held = Some(held);
        Ok(())
    }

    async fn kept_hold(&self, mode: &ModeKey) -> Result<Option<bool>, PoolError> {
        Ok(self.state().mode(mode).held)
    }

    async fn release_lease(&self, mode: &ModeKey, token: u64) -> Result<bool, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(token) {
            return Ok(false);
        }
        pool.lease = None;
        Ok(true)
    }

    async fn renew_lease_and_probe(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<Option<ModeActivity>, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        if pool.lease_token(now) != Some(token) {
            return Ok(None);
        }
        pool.lease = Some(Lease {
            token,
            expires: now + ttl,
        });
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        Ok(Some(ModeActivity {
            searches: count(pool.pool.len()),
            outbox: count(pool.outbox.len()),
            proposals: count(pool.proposals.len()),
            backfills: count(pool.backfills.len()),
        }))
    }

    async fn worker_heartbeat(
        &self,
        worker: &str,
        ttl: Duration,
    ) -> Result<Vec<String>, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        state.workers.retain(|_, lapses| *lapses > now);
        state.workers.insert(worker.to_owned(), now + ttl);
        let mut live: Vec<String> = state.workers.keys().cloned().collect();
        live.sort_unstable();
        Ok(live)
    }

    async fn worker_leave(&self, worker: &str) -> Result<(), PoolError> {
        self.state().workers.remove(worker);
        Ok(())
    }
}
