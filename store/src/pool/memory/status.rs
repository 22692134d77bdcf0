//! Status messages: one broadcast channel per ticket with subscribers.

use std::sync::PoisonError;

use async_trait::async_trait;
use futures::StreamExt;
use tokio::sync::broadcast;

use super::MemoryPoolStore;
use crate::pool::{PoolError, StatusBus, StatusStream};

#[async_trait]
impl StatusBus for MemoryPoolStore {
    async fn publish_status(&self, ticket_id: &str, json: &str) -> Result<(), PoolError> {
        let mut statuses = self.statuses.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = statuses.get(ticket_id) {
            if tx.send(json.to_owned()).is_err() {
                // Nobody listens any more.
                statuses.remove(ticket_id);
            }
        }
        Ok(())
    }

    async fn subscribe_status(&self, ticket_id: &str) -> Result<StatusStream, PoolError> {
        let rx = self
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(ticket_id.to_owned())
            .or_insert_with(|| broadcast::channel(64).0)
            .subscribe();
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
