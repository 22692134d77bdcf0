//! A webhook host that resolves to a non-public address at delivery (its
//! mode written while the name did not resolve yet) is refused by the
//! check at delivery: one attempt, nothing sent, and the delivery is
//! `failed` with the refusal as its error (docs/webhooks.md, "Attempts
//! and retries").

use crate::env::Env;
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_store::repos::deliveries::{self, AfterAttempt};
use matchplane_webhook::{Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Schedule};
use matchplane_worker::deliveries::DeliveryWorker;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_name_resolving_inside_fails_the_delivery_at_its_first_attempt() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    // `localhost` resolves to loopback; the mode is written to the store
    // directly, as a name that did not resolve at configuration would be.
    let url = format!("https://localhost:{}/hook", receiver.addr.port());
    let env = Env::new(Some(&url), 1.0).await;
    let now = Utc::now();
    env.queue_delivery(now).await;

    // The worker's own check: private webhooks not allowed.
    let dispatcher = Dispatcher::new(
        Deliverer::new(DeliveryConfig::default()).unwrap(),
        Schedule::scaled(0.001).unwrap(),
        EndpointLimits::default(),
    );
    let worker = DeliveryWorker::new(
        env.db.clone(),
        Arc::new(dispatcher),
        Duration::from_secs(30),
    );
    let attempted = worker.tick(now, 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    assert_eq!(attempted[0].after, AfterAttempt::Finished("failed"));
    // Nothing is left to retry, however late.
    let later = now + chrono::Duration::minutes(30);
    assert!(worker.tick(later, 10).await.unwrap().is_empty());

    let mut all = deliveries::of_mode(
        &env.db,
        &env.project_id,
        ("duel", chrono::DateTime::UNIX_EPOCH),
        None,
        10,
    )
    .await
    .unwrap();
    assert_eq!(all.len(), 1);
    let (delivery, attempts) = all.remove(0);
    assert_eq!(delivery.status, "failed");
    assert_eq!(delivery.attempt_count, 1);
    assert_eq!(attempts.len(), 1);
    // The attempt log and the mode's webhook status, both the tenant's to
    // read, say the name resolves inside, never to what (docs/webhooks.md,
    // "Which URLs are accepted").
    let error = attempts[0].error.as_deref().unwrap_or_default();
    assert_eq!(
        error,
        "refused: the host `localhost` resolves to a non-public address"
    );
    let health = matchplane_store::repos::webhook_health::get(&env.db, &env.project_id, "duel")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(health.last_error.as_deref(), Some(error));
    assert!(receiver.received().is_empty(), "nothing was sent");
}
