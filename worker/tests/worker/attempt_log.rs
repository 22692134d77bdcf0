//! The deliveries log holds every attempt: one made by a worker killed
//! during it is logged (and counted) before it is sent, so another worker
//! counts on from it.

use crate::env::Env;
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_store::repos::deliveries;
use std::time::Duration;

#[tokio::test]
async fn an_attempt_cut_short_is_logged_and_counted() {
    let receiver = Receiver::start(vec![Reply::hang()], Reply::status(200)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let now = Utc::now();
    env.queue_delivery(now).await;

    // The worker stops while its attempt waits for the receiver.
    let worker = env.deliveries(1.0);
    let cut = tokio::time::timeout(Duration::from_millis(800), worker.tick(now, 10)).await;
    assert!(cut.is_err(), "the attempt was still running");
    assert_eq!(receiver.received().len(), 1, "it was sent");
    let logged = |env: &Env| {
        let db = env.db.clone();
        let project = env.project_id.clone();
        async move {
            let mut all = deliveries::of_mode(
                &db,
                &project,
                ("duel", chrono::DateTime::UNIX_EPOCH),
                None,
                10,
            )
            .await
            .unwrap();
            assert_eq!(all.len(), 1);
            all.remove(0)
        }
    };
    let (delivery, attempts) = logged(&env).await;
    assert_eq!(attempts.len(), 1, "the cut attempt is in the log");
    assert_eq!(delivery.attempt_count, 1);
    assert_eq!(
        attempts[0].error.as_deref(),
        Some(deliveries::ATTEMPT_UNFINISHED)
    );

    // Another worker takes it once the lock has run out.
    let later = now + chrono::Duration::seconds(31);
    let attempted = env.deliveries(1.0).tick(later, 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    assert_eq!(attempted[0].number, 2);
    let (delivery, attempts) = logged(&env).await;
    assert_eq!(delivery.status, "succeeded");
    assert_eq!(delivery.attempt_count, 2);
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[1].status_code, Some(200));
}
