//! `matchplane dev`'s shape: the whole worker in-process over the memory
//! pool store and a SQLite file; a match is made, recorded and delivered.

use crate::env::mode_config;
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_matchmaker::Search;
use matchplane_store::pool::{MemoryPoolStore, ModeKey, PoolStore};
use matchplane_store::repos::{deliveries, game_modes, matches, projects};
use matchplane_webhook::{DeliveryConfig, Schedule};
use matchplane_worker::{run_worker, WorkerConfig};
use sea_orm::Database;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn the_worker_runs_on_sqlite_and_the_memory_pool() {
    let receiver = Receiver::start(vec![Reply::status(503)], Reply::status(200)).await;
    let path = std::env::temp_dir().join(format!("mp_w_{}.db", ulid::Ulid::new()));
    let db = Database::connect(format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    matchplane_migrations::migrate(&db).await.unwrap();
    let project = projects::create(&db, "dev", "enterprise", Utc::now())
        .await
        .unwrap();
    game_modes::create(
        &db,
        &project.id,
        "duel",
        mode_config("duel", Some(&receiver.url()), 0.1),
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        Utc::now(),
    )
    .await
    .unwrap();
    let pool: Arc<dyn PoolStore> = Arc::new(MemoryPoolStore::new());
    let mode = ModeKey::new(project.id.clone(), "duel");
    let now = Utc::now().timestamp_micros() as f64 / 1e6;
    for (ticket, player) in [("tkt_a", "a"), ("tkt_b", "b")] {
        pool.add_search(
            &mode,
            &Search::solo(ticket, player, 1500.0, now),
            now + 600.0,
            None,
        )
        .await
        .unwrap();
    }
    let shutdown = CancellationToken::new();
    let config = WorkerConfig {
        lease_ttl: Duration::from_millis(600),
        reconcile_interval: Duration::from_millis(100),
        delivery: DeliveryConfig {
            allow_private: true,
            ..DeliveryConfig::default()
        },
        schedule: Schedule::scaled(0.001).unwrap(),
        delivery_poll: Duration::from_millis(20),
        ..WorkerConfig::default()
    };
    let tickets = Arc::new(matchplane_store::tickets::MemoryTicketStore::new(
        pool.clone(),
    ));
    let worker = tokio::spawn(run_worker(
        config,
        pool,
        tickets,
        db.clone(),
        shutdown.clone(),
    ));
    let deadline = Instant::now() + Duration::from_secs(10);
    let match_id = loop {
        let found = matches::list(&db, &project.id, None, None, 10)
            .await
            .unwrap();
        if let Some(m) = found.first() {
            let logged = deliveries::of_match(&db, &project.id, &m.id).await.unwrap();
            if logged.first().is_some_and(|(d, _)| d.status == "succeeded") {
                break m.id.clone();
            }
        }
        assert!(Instant::now() < deadline, "no delivered match");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let received = receiver.received();
    assert_eq!(received.len(), 2, "503 then 200");
    assert!(received.iter().all(|r| r.header("webhook-id") == match_id));
    shutdown.cancel();
    worker.await.unwrap().unwrap();
    let _ = std::fs::remove_file(path);
}
