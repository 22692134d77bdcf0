//! A mode's outbox: entries in order, each remembering when it was last
//! handed out, so an idle one is taken over as Redis's XAUTOCLAIM does.

use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::MemoryPoolStore;
use crate::pool::{ModeKey, Outbox, OutboxEntry, PoolError};

#[async_trait]
impl Outbox for MemoryPoolStore {
    async fn read_outbox(
        &self,
        mode: &ModeKey,
        consumer: &str,
        count: usize,
        min_idle: Duration,
    ) -> Result<Vec<OutboxEntry>, PoolError> {
        let now = Instant::now();
        let mut state = self.state();
        let pool = state.mode(mode);
        let count = count.max(1);
        // The consumer's own unacknowledged entries first, then those taken
        // over (idle long enough), then never read, as in Redis.
        let own = pool
            .outbox
            .iter()
            .filter(|(_, e)| e.delivered.as_ref().is_some_and(|(_, c)| c == consumer))
            .map(|(seq, _)| *seq);
        let idle = pool
            .outbox
            .iter()
            .filter(|(_, e)| {
                e.delivered
                    .as_ref()
                    .is_some_and(|(at, c)| c != consumer && now >= *at + min_idle)
            })
            .map(|(seq, _)| *seq);
        let fresh = pool
            .outbox
            .iter()
            .filter(|(_, e)| e.delivered.is_none())
            .map(|(seq, _)| *seq);
        let picked: Vec<u64> = own.chain(idle).chain(fresh).take(count).collect();
        Ok(picked
            .into_iter()
            .filter_map(|seq| {
                let entry = pool.outbox.get_mut(&seq)?;
                entry.delivered = Some((now, consumer.to_owned()));
                Some(OutboxEntry {
                    id: format!("0-{seq}"),
                    match_id: entry.match_id.clone(),
                    record_json: entry.record_json.clone(),
                })
            })
            .collect())
    }

    async fn ack_outbox(&self, mode: &ModeKey, ids: &[String]) -> Result<u64, PoolError> {
        let mut state = self.state();
        let pool = state.mode(mode);
        let mut acked = 0;
        for id in ids {
            let seq = id.strip_prefix("0-").and_then(|s| s.parse::<u64>().ok());
            if let Some(entry) = seq.and_then(|seq| pool.outbox.remove(&seq)) {
                acked += u64::from(entry.delivered.is_some());
            }
        }
        Ok(acked)
    }
}
