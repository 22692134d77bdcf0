//! A worker held up between taking a delivery and sending it, for longer
//! than the delivery's lock (a stalled database: here the attempts log is
//! locked by another transaction, as a long migration would), does not
//! send it under that lapsed lock next to the worker that took the
//! delivery on: the endpoint gets it exactly once, and its log lists the
//! one attempt sent. When the worker cannot extend the lock in time either,
//! it gives the delivery back unsent and uncounted, and the next claim
//! sends it.
//!
//! Before the fix the first worker sent it as soon as its attempt's start
//! was written, with its lock already run out, and a second worker, which
//! had taken the lapsed delivery meanwhile, sent it too.

use crate::env::Env;
use crate::fairness::{receiver, Seen};
use chrono::Utc;
use matchplane_store::entities::webhook_delivery;
use matchplane_store::repos::deliveries;
use matchplane_webhook::{Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Schedule};
use matchplane_worker::deliveries::DeliveryWorker;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, EntityTrait, TransactionTrait};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Attempts of 1 s at most, locks of 4 s (the least a worker with that
/// timeout takes: twice the timeout and the 1 s margin).
fn worker(env: &Env) -> DeliveryWorker {
    worker_on(env.db.clone())
}

/// [`worker`] on the database `db`.
pub(crate) fn worker_on(db: DatabaseConnection) -> DeliveryWorker {
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
    DeliveryWorker::new(db, Arc::new(dispatcher), Duration::from_secs(4))
}

fn spawn(env: &Env, shutdown: &CancellationToken) -> tokio::task::JoinHandle<()> {
    let (worker, stop) = (worker(env), shutdown.clone());
    tokio::spawn(async move { worker.run(8, Duration::from_millis(50), stop).await })
}

async fn row(db: &DatabaseConnection, id: &str) -> webhook_delivery::Model {
    webhook_delivery::Entity::find_by_id(id.to_owned())
        .one(db)
        .await
        .unwrap()
        .unwrap()
}

/// A connection of its own to the test's database, for the transactions
/// that stall the workers.
async fn other_connection(env: &Env) -> DatabaseConnection {
    let direct = env.db_url_via(&env.database_host());
    Database::connect(direct.as_str()).await.unwrap()
}

/// One delivery (to a receiver answering `200` after half a second), taken
/// by a first worker while another transaction holds the attempts log, and
/// a second worker beside it. The attempts log is freed 6 s after the
/// claim: past the lock (4 s) and the renewal that waited behind it (sent
/// a third of the lock in, for another 4 s). `after` runs just before the
/// log is freed, and the log is freed once it returns. Returns when the
/// delivery has ended, with what the receiver saw and when the log was
/// freed.
async fn stalled_past_the_lock<F, Fut>(after: F) -> (Env, Seen, Instant)
where
    F: FnOnce(DatabaseConnection) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (url, seen) = receiver(Duration::from_millis(500)).await;
    let env = Env::new(Some(&url), 1.0).await;
    let id = env.queue_delivery(Utc::now()).await;

    let other = other_connection(&env).await;
    let stall = other.begin().await.unwrap();
    stall
        .execute_unprepared("LOCK TABLE webhook_attempts IN SHARE MODE")
        .await
        .unwrap();

    // The first worker takes the delivery and waits on the attempts log.
    let shutdown = CancellationToken::new();
    let first = spawn(&env, &shutdown);
    let deadline = Instant::now() + Duration::from_secs(10);
    while row(&env.db, &id).await.lock_token.is_none() {
        assert!(Instant::now() < deadline, "the delivery was never taken");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let taken = Instant::now();
    let second = spawn(&env, &shutdown);

    tokio::time::sleep(Duration::from_secs(6).saturating_sub(taken.elapsed())).await;
    after(other_connection(&env).await).await;
    stall.rollback().await.unwrap();
    let freed = Instant::now();

    let deadline = Instant::now() + Duration::from_secs(20);
    while row(&env.db, &id).await.status == deliveries::PENDING {
        assert!(Instant::now() < deadline, "the delivery never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Room for a second attempt to arrive, had one been sent.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    shutdown.cancel();
    first.await.unwrap();
    second.await.unwrap();
    (env, seen, freed)
}

/// The delivery reached the receiver once, and ended delivered with that
/// one attempt listed and counted.
async fn delivered_once(env: &Env, seen: &Seen) -> Instant {
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
    arrivals[0].1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_lapsed_before_the_send_never_sends_twice() {
    let (env, seen, _) = stalled_past_the_lock(|_| async {}).await;
    delivered_once(&env, &seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_cannot_be_extended_in_time_gives_the_delivery_back() {
    // The deliveries are held too (no row of them can be written), from
    // just after the first worker's attempt start is written until 4.5 s
    // after: its renewals (the one it sends then, and its renewal task's
    // next) come back with under 1 s of the 4 s they asked for left, less
    // than an attempt needs (its 1 s and the 1 s margin).
    let held = Arc::new(std::sync::Mutex::new(None::<Instant>));
    let until = held.clone();
    let (env, seen, freed) = stalled_past_the_lock(move |other| async move {
        let (sent, queued) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let hold = other.begin().await.unwrap();
            let taking = hold.execute_unprepared("LOCK TABLE webhook_deliveries IN SHARE MODE");
            let _ = sent.send(());
            // Granted once the first worker's attempt start is written (and
            // the renewal that waited behind it), ahead of any write sent
            // after.
            taking.await.unwrap();
            tokio::time::sleep(Duration::from_millis(4500)).await;
            hold.rollback().await.unwrap();
            *until.lock().unwrap() = Some(Instant::now());
        });
        queued.await.unwrap();
        // Let the lock request reach the server before the attempts log is
        // freed.
        tokio::time::sleep(Duration::from_millis(300)).await;
    })
    .await;
    let released = held.lock().unwrap().expect("the deliveries were held");
    assert!(released >= freed);
    let arrived = delivered_once(&env, &seen).await;
    // Nothing was sent under the first worker's lapsing lock: the one
    // attempt went out only once the deliveries were free, by the claim
    // that took the given-back delivery, and the attempt given back is
    // neither listed nor counted.
    assert!(
        arrived >= released,
        "sent {:?} before the deliveries were free",
        released - arrived
    );
}
