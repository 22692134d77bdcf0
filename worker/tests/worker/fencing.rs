//! A worker whose lease expired (a long pause) cannot commit: its claim is
//! refused by the fencing token, and the searches stay for the new holder.

use crate::env::Env;
use matchplane_store::pool::SearchState;
use matchplane_worker::tick::TickOutcome;
use std::time::Duration;

#[tokio::test]
async fn a_stale_fencing_token_cannot_claim() {
    let env = Env::new(None, 1.0).await;
    let a = env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let stale = env.lease("paused", Duration::from_millis(100)).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let fresh = env.lease("other", Duration::from_secs(5)).await;
    assert!(fresh > stale);

    let (outcome, _) = env.tick(stale).await;
    assert_eq!(outcome, TickOutcome::LostLease);
    assert!(matches!(
        env.pool.search_state(&env.mode, &a).await.unwrap(),
        Some(SearchState::Live(_))
    ));
    assert_eq!(env.drain("paused").await, 0, "nothing reached the outbox");

    assert_eq!(env.tick(fresh).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("other").await, 1);
}
