//! A worker held up between taking a delivery and sending it, for longer
//! than the delivery's lock (a stalled database: here the attempts log is
//! locked by another transaction, as a long migration would), does not
//! send it next to the worker that took the lapsed delivery on: the
//! endpoint gets it exactly once, and its log lists the one attempt sent.
//!
//! Before the fix the first worker sent it as soon as its attempt's start
//! was written, with its lock already run out, and a second worker, which
//! had taken the lapsed delivery meanwhile, sent it too.

use crate::env::Env;
use crate::fairness::receiver;
use chrono::Utc;
use matchplane_store::repos::deliveries;
use matchplane_webhook::{Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Schedule};
use matchplane_worker::deliveries::DeliveryWorker;
use sea_orm::{ConnectionTrait, Database, EntityTrait, TransactionTrait};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Attempts of 1 s at most, locks of 4 s (the least a worker with that
/// timeout takes: twice the timeout and the 1 s margin).
fn worker(env: &Env) -> DeliveryWorker {
    let deliverer = Deliverer::new(DeliveryConfig {
        allow_private: true,
        timeout: Duration::from_secs(1),
    })
    .unwrap();
    let dispatcher = Dispatcher::new(
        deliverer,
        Schedule::scaled(0.01).unwrap(),
        EndpointLimits::default(),
    );
    DeliveryWorker::new(env.db.clone(), Arc::new(dispatcher), Duration::from_secs(4))
}

fn spawn(env: &Env, shutdown: &CancellationToken) -> tokio::task::JoinHandle<()> {
    let (worker, stop) = (worker(env), shutdown.clone());
    tokio::spawn(async move { worker.run(8, Duration::from_millis(50), stop).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_lapsed_before_the_send_never_sends_twice() {
    // The receiver answers 200 after half a second.
    let (url, seen) = receiver(Duration::from_millis(500)).await;
    let env = Env::new(Some(&url), 1.0).await;
    let id = env.queue_delivery(Utc::now()).await;
    let row = |env: &Env| {
        let (db, id) = (env.db.clone(), id.clone());
        async move {
            matchplane_store::entities::webhook_delivery::Entity::find_by_id(id)
                .one(&db)
                .await
                .unwrap()
                .unwrap()
        }
    };

    // Another transaction holds the attempts log: no attempt's start can be
    // written until it ends.
    let direct = env.db_url_via(&env.database_host());
    let other = Database::connect(direct.as_str()).await.unwrap();
    let stall = other.begin().await.unwrap();
    stall
        .execute_unprepared("LOCK TABLE webhook_attempts IN SHARE MODE")
        .await
        .unwrap();

    // The first worker takes the delivery and waits on the attempts log.
    let shutdown = CancellationToken::new();
    let first = spawn(&env, &shutdown);
    let deadline = Instant::now() + Duration::from_secs(10);
    while row(&env).await.lock_token.is_none() {
        assert!(Instant::now() < deadline, "the delivery was never taken");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let taken = Instant::now();
    // A second worker runs beside it.
    let second = spawn(&env, &shutdown);

    // The stall outlasts the lock (4 s) and the renewal that was waiting
    // behind it (sent a third of the lock in, for another 4 s).
    tokio::time::sleep(Duration::from_secs(6).saturating_sub(taken.elapsed())).await;
    stall.rollback().await.unwrap();

    let deadline = Instant::now() + Duration::from_secs(20);
    while row(&env).await.status == deliveries::PENDING {
        assert!(Instant::now() < deadline, "the delivery never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Room for a second attempt to arrive, had one been sent.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    shutdown.cancel();
    first.await.unwrap();
    second.await.unwrap();

    let arrivals = seen.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 1, "sent more than once: {arrivals:?}");
    let mut listed = deliveries::of_mode(
        &env.db,
        &env.project_id,
        ("duel", chrono::DateTime::UNIX_EPOCH),
        None,
        10,
    )
    .await
    .unwrap();
    let (delivery, attempts) = listed.remove(0);
    assert_eq!(arrivals[0].0, delivery.id, "its webhook-id");
    assert_eq!(delivery.status, "succeeded", "{delivery:?}");
    assert_eq!(delivery.attempt_count, 1, "{delivery:?} {attempts:?}");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(attempts[0].status_code, Some(200));
}
