//! A mode's outbox stream: read through one consumer group
//! (`scripts/outbox_read.lua`: XAUTOCLAIM, then XREADGROUP), acknowledged
//! and deleted in one MULTI.

use std::time::Duration;

use async_trait::async_trait;

use super::keys::OUTBOX_GROUP;
use super::{millis, RedisPoolStore};
use crate::pool::{ModeKey, Outbox, OutboxEntry, PoolError};

#[async_trait]
impl Outbox for RedisPoolStore {
    async fn read_outbox(
        &self,
        mode: &ModeKey,
        consumer: &str,
        count: usize,
        min_idle: Duration,
    ) -> Result<Vec<OutboxEntry>, PoolError> {
        let keys = self.keys(mode);
        let flat: Vec<String> = self
            .inner
            .scripts
            .outbox_read
            .key(&keys.outbox)
            .arg(OUTBOX_GROUP)
            .arg(consumer)
            .arg(count.max(1))
            .arg(millis(min_idle))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(flat
            .chunks_exact(3)
            .map(|e| OutboxEntry {
                id: e[0].clone(),
                match_id: e[1].clone(),
                record_json: e[2].clone(),
            })
            .collect())
    }

    async fn ack_outbox(&self, mode: &ModeKey, ids: &[String]) -> Result<u64, PoolError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let keys = self.keys(mode);
        let (acked, _deleted): (u64, u64) = redis::pipe()
            .atomic()
            .xack(&keys.outbox, OUTBOX_GROUP, ids)
            .xdel(&keys.outbox, ids)
            .query_async(&mut self.conn())
            .await?;
        Ok(acked)
    }
}
