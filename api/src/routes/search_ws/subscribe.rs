//! A socket's status subscription (docs/searching.md, "WebSocket"): the
//! channel its search's final and proposal messages come over, waited for
//! at most [`SUBSCRIBE_WAIT`].
//!
//! The socket re-reads its search's state every ping interval anyway (the
//! safety net for pub/sub's at-most-once delivery), so a search whose
//! subscription does not come in time starts without it and learns its
//! news from those re-reads, a second late at worst. Before, a start
//! waited on the subscription until the request's deadline and answered
//! `503`, while its search, already in the pool, could be matched with
//! nobody to tell the player (seen with a stalled Redis Cluster replica
//! holding the subscription).

use futures::StreamExt;
use matchplane_store::pool::{PoolError, StatusStream};
use std::future::Future;
use std::time::Duration;

/// The longest a socket's start waits for its status subscription.
pub(super) const SUBSCRIBE_WAIT: Duration = Duration::from_secs(2);

/// The subscription `subscribing` gives within [`SUBSCRIBE_WAIT`], or a
/// stream that never yields (the socket's re-reads carry the search).
pub(super) async fn or_re_reads(
    ticket_id: &str,
    subscribing: impl Future<Output = Result<StatusStream, PoolError>>,
) -> StatusStream {
    match tokio::time::timeout(SUBSCRIBE_WAIT, subscribing).await {
        Ok(Ok(updates)) => updates,
        Ok(Err(error)) => {
            tracing::warn!(%error, ticket_id, "the status subscription failed: the socket re-reads its search instead");
            futures::stream::pending().boxed()
        }
        Err(_) => {
            tracing::warn!(
                ticket_id,
                "the status subscription did not come within {SUBSCRIBE_WAIT:?}: the socket re-reads its search instead"
            );
            futures::stream::pending().boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    #[tokio::test]
    async fn a_subscription_that_does_not_come_leaves_the_re_reads() {
        let started = std::time::Instant::now();
        let mut updates = or_re_reads("tkt_1", std::future::pending()).await;
        assert!(started.elapsed() >= SUBSCRIBE_WAIT);
        assert!(updates.next().now_or_never().is_none());
        let failed = async { Err(PoolError::Unavailable("down")) };
        let mut updates = or_re_reads("tkt_1", failed).await;
        assert!(updates.next().now_or_never().is_none());
    }

    #[tokio::test]
    async fn a_subscription_in_time_is_used() {
        let given = futures::stream::iter(["a".to_owned()]).boxed();
        let mut updates = or_re_reads("tkt_1", async { Ok(given) }).await;
        assert_eq!(updates.next().await.as_deref(), Some("a"));
    }
}
