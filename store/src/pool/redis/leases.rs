//! A mode's fenced lease (`scripts/lease.lua`): acquire, renew, release.

use std::time::Duration;

use async_trait::async_trait;
use redis::AsyncCommands;

use super::keys::workers_key;
use super::{millis, RedisPoolStore};
use crate::pool::{Leases, ModeActivity, ModeKey, PoolError, MAX_LEASE_EPOCH};

#[async_trait]
impl Leases for RedisPoolStore {
    async fn acquire_lease_in_epoch(
        &self,
        mode: &ModeKey,
        owner: &str,
        epoch: u64,
        ttl: Duration,
    ) -> Result<Option<u64>, PoolError> {
        let keys = self.keys(mode);
        Ok(self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .arg("acquire")
            .arg(owner)
            .arg(millis(ttl))
            .arg(epoch % MAX_LEASE_EPOCH)
            .invoke_async(&mut self.conn())
            .await?)
    }

    async fn renew_lease(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let held: i64 = self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .arg("renew")
            .arg(token)
            .arg(millis(ttl))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(held == 1)
    }

    async fn keep_hold(&self, mode: &ModeKey, held: bool) -> Result<(), PoolError> {
        let keys = self.keys(mode);
        let () = self.conn().set(&keys.held, u8::from(held)).await?;
        Ok(())
    }

    async fn kept_hold(&self, mode: &ModeKey) -> Result<Option<bool>, PoolError> {
        let keys = self.keys(mode);
        let kept: Option<String> = self.conn().get(&keys.held).await?;
        Ok(kept.map(|v| v == "1"))
    }

    async fn release_lease(&self, mode: &ModeKey, token: u64) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let held: i64 = self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .arg("release")
            .arg(token)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(held == 1)
    }

    async fn renew_lease_and_probe(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<Option<ModeActivity>, PoolError> {
        let keys = self.keys(mode);
        let reply: Option<Vec<u64>> = self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .key(&keys.pool)
            .key(&keys.outbox)
            .key(&keys.proposals)
            .key(&keys.backfill_seats)
            .arg("probe")
            .arg(token)
            .arg(millis(ttl))
            .invoke_async(&mut self.conn())
            .await?;
        let Some(counts) = reply else {
            return Ok(None);
        };
        match counts.as_slice() {
            [1, searches, outbox, proposals, backfills] => {
                self.sync_if_changed(mode, *searches).await;
                Ok(Some(ModeActivity {
                    searches: *searches,
                    outbox: *outbox,
                    proposals: *proposals,
                    backfills: *backfills,
                }))
            }
            _ => Err(PoolError::Corrupt(format!(
                "lease probe answered {counts:?}"
            ))),
        }
    }

    async fn worker_heartbeat(
        &self,
        worker: &str,
        ttl: Duration,
    ) -> Result<Vec<String>, PoolError> {
        let mut live: Vec<String> = self
            .inner
            .scripts
            .workers
            .key(workers_key(&self.inner.prefix))
            .arg("beat")
            .arg(worker)
            .arg(millis(ttl).max(1))
            .invoke_async(&mut self.conn())
            .await?;
        live.sort_unstable();
        Ok(live)
    }

    async fn worker_leave(&self, worker: &str) -> Result<(), PoolError> {
        let _: redis::Value = self
            .inner
            .scripts
            .workers
            .key(workers_key(&self.inner.prefix))
            .arg("leave")
            .arg(worker)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }
}
