//! What the clients of a closed proposal are told: `requeued` for the ones
//! back in the pool, `failed` (with its code) for the ones it failed. A
//! made match's clients are told `matched` by the record consumer, once the
//! match is stored.

use super::status::{publish, StatusMessage};
use crate::pool::proposals::fail_message;
use crate::pool::{PoolStore, Settled};

/// Publishes each member's message of `settled` (fire and forget, as
/// [`publish`]).
pub async fn announce_settled(pool: &dyn PoolStore, settled: &Settled) {
    let requeued = StatusMessage::Requeued {
        match_id: Some(settled.match_id.clone()),
    };
    for ticket in settled.requeued() {
        publish(pool, ticket, &requeued).await;
    }
    for (ticket, code) in settled.failed() {
        let message = StatusMessage::Failed {
            code: code.to_owned(),
            message: fail_message(code).to_owned(),
        };
        publish(pool, ticket, &message).await;
    }
}
