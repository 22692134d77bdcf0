//! Status messages: one broadcast channel per ticket with subscribers.

use std::sync::PoisonError;

use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::broadcast;

use super::MemoryPoolStore;
use crate::pool::{PoolError, StatusBus, StatusStream};

/// Fewer channels than this are never swept.
const SWEEP_FROM: usize = 1024;

#[async_trait]
impl StatusBus for MemoryPoolStore {
    async fn publish_status(&self, ticket_id: &str, json: &str) -> Result<(), PoolError> {
        let mut statuses = self.statuses.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = statuses.channels.get(ticket_id) {
            if tx.send(json.to_owned()).is_err() {
                // Nobody listens any more.
                statuses.channels.remove(ticket_id);
            }
        }
        Ok(())
    }

    async fn subscribe_status(&self, ticket_id: &str) -> Result<StatusStream, PoolError> {
        let mut statuses = self.statuses.lock().unwrap_or_else(PoisonError::into_inner);
        // The channel of a ticket whose listeners left and that got no
        // message since stays until a sweep: one each time the map has
        // doubled since the last, so the sweeps cost O(1) a subscription.
        if statuses.channels.len() >= SWEEP_FROM.max(2 * statuses.swept_len) {
            statuses.channels.retain(|_, tx| tx.receiver_count() > 0);
            statuses.swept_len = statuses.channels.len();
        }
        let rx = statuses
            .channels
            .entry(ticket_id.to_owned())
            .or_insert_with(|| broadcast::channel(64).0)
            .subscribe();
        drop(statuses);
        Ok(futures::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(message) => return Some((message, rx)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::SWEEP_FROM;
    use crate::pool::memory::MemoryPoolStore;
    use crate::pool::StatusBus;

    /// Subscriptions whose listeners left without a message since (a
    /// socket closed) are swept: the channels stay within twice the live
    /// ones (a long-running `dev` process kept one per ticket ever
    /// listened to).
    #[tokio::test]
    async fn channels_nobody_listens_to_are_swept() {
        let store = MemoryPoolStore::new();
        let kept = store.subscribe_status("live").await.unwrap();
        for i in 0..10 * SWEEP_FROM {
            drop(store.subscribe_status(&format!("t{i}")).await.unwrap());
        }
        let len = store.statuses.lock().unwrap().channels.len();
        assert!(len <= 2 * SWEEP_FROM, "{len} channels kept");
        store.publish_status("live", "{}").await.unwrap();
        assert!(store.statuses.lock().unwrap().channels.contains_key("live"));
        drop(kept);
    }
}
