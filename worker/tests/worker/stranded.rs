//! The webhook delivery loop's database calls are bounded
//! (docs/operations.md, "What losing a dependency costs"): a call whose
//! connection's peer vanished mid-exchange (a database failed over to
//! another host: the old connections never answer again, new ones reach
//! the new host) is given up after its limit, and the loop goes on over
//! new connections. Before the bound the claim in flight waited for an
//! answer that never came, and no webhook was sent again.

use crate::env::Env;
use crate::fairness::receiver;
use crate::fault_proxy::FaultProxy;
use crate::lock_guard::worker_on;
use chrono::Utc;
use matchplane_store::db::{connect_with, DbTimeouts};
use sea_orm::{ConnectionTrait, Database, TransactionTrait};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A claim in flight when its connection is stranded: the delivery it
/// claimed is sent once its lock runs out, and one queued later is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_stranded_mid_call_does_not_stop_the_delivery_loop() {
    let (url, seen) = receiver(Duration::ZERO).await;
    let env = Env::new(Some(&url), 1.0).await;
    let proxy = FaultProxy::start(&env.database_host()).await;
    let via = env.db_url_via(&format!("127.0.0.1:{}", proxy.port));
    let db = connect_with(&via, DbTimeouts::default()).await.unwrap();
    // Attempts of 1 s, locks of 4 s.
    let worker = worker_on(db);

    // Claims wait behind a lock on the deliveries (writes only: the
    // backlog's count reads on).
    let first = env.queue_delivery(Utc::now()).await;
    let direct = Database::connect(env.db_url_via(&env.database_host()).as_str())
        .await
        .unwrap();
    let hold = direct.begin().await.unwrap();
    hold.execute_unprepared("LOCK TABLE webhook_deliveries IN SHARE MODE")
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let loop_stop = stop.clone();
    let running = tokio::spawn(async move {
        worker.run(8, Duration::from_millis(50), loop_stop).await;
    });
    // The loop's claim is sent and waits on the lock; then its connection
    // is stranded, and the lock freed (the claim commits unseen).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    proxy.strand();
    hold.rollback().await.unwrap();
    let stranded = Instant::now();
    let second = env.queue_delivery(Utc::now()).await;

    let within = Duration::from_secs(25);
    loop {
        let ids: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|(id, _)| id.clone())
            .collect();
        if ids.contains(&first) && ids.contains(&second) {
            break;
        }
        assert!(
            stranded.elapsed() < within,
            "sent {ids:?} in {within:?} after the claim was stranded, not {first} and {second}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.cancel();
    // The loop stops too: nothing of it waits on a stranded call.
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the delivery loop stops")
        .unwrap();
}
