//! A mode's fenced lease (`scripts/lease.lua`): acquire, renew, release.

use std::time::Duration;

use async_trait::async_trait;

use super::{millis, RedisPoolStore};
use crate::pool::{Leases, ModeKey, PoolError, MAX_LEASE_EPOCH};

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
}
