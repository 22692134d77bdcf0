//! A Redis connection whose peer vanished without closing it (a host
//! failed over or cut off: no reset ever comes) is replaced once a command
//! on it times out (docs/operations.md, "What losing a dependency
//! costs"). Before, every later command waited on the silent connection
//! and was refused `503` until the kernel gave up on it, many minutes
//! later, although a new connection would have reached Redis at once.

use crate::harness::solo;
use crate::outages::{app_within, database, redis_through_proxy, send, studio};
use axum::http::{Method, StatusCode};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_redis_connection_is_replaced_after_a_timeout() {
    let (proxy, via) = redis_through_proxy().await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, _database) = database(None).await;
    // Redis commands wait 1 s for their answer (the app's setting).
    let app = app_within(&db_url, &via, &prefix, Duration::from_secs(10)).await;
    let (project, key) = studio(&app).await;
    let tickets = format!("/v1/projects/{project}/tickets");
    let ticket = |player: &str| {
        send(
            &app,
            Method::POST,
            &tickets,
            Some(&key),
            Some(solo("duel", player)),
        )
    };
    let made = ticket("a").await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);

    // The connection in use goes silent for good; new ones reach Redis.
    proxy.strand();
    let cut = ticket("b").await;
    assert_eq!(cut.status, StatusCode::SERVICE_UNAVAILABLE, "{}", cut.body);

    let stranded = Instant::now();
    let mut answers = Vec::new();
    loop {
        let got = ticket(&format!("p{}", answers.len())).await;
        answers.push(got.status);
        if got.status == StatusCode::CREATED {
            break;
        }
        assert!(
            stranded.elapsed() < Duration::from_secs(8),
            "still refused 8 s after the first timeout: {answers:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(
        &crate::harness::redis_url(),
        &prefix,
    );
}
