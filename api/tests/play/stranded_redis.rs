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

/// The status subscription's connection is replaced as well: after a
/// strand, a WebSocket search starts again within seconds (before, every
/// start waited on the silent subscription and was cut at the request
/// deadline, `503`, until the API restarted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_starts_recover_after_a_strand() {
    use futures::StreamExt;
    let (proxy, via) = redis_through_proxy().await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, _database) = database(None).await;
    let app = app_within(&db_url, &via, &prefix, Duration::from_secs(10)).await;
    let (project, key) = studio(&app).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await });
    let tickets = format!("/v1/projects/{project}/tickets");
    let token_of = |player: String| {
        let (app, tickets, key) = (app.clone(), tickets.clone(), key.clone());
        async move {
            let started = Instant::now();
            loop {
                let made = send(
                    &app,
                    Method::POST,
                    &tickets,
                    Some(&key),
                    Some(solo("duel", &player)),
                )
                .await;
                if made.status == StatusCode::CREATED {
                    return made.body["token"].as_str().unwrap().to_owned();
                }
                assert!(
                    started.elapsed() < Duration::from_secs(8),
                    "no ticket: {}",
                    made.body
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    let search = |token: String| async move {
        let url = format!("ws://{addr}/v1/search?ticket={token}");
        let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let first = tokio::time::timeout(Duration::from_secs(5), socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(first.to_string().contains("searching"), "{first}");
        socket
    };
    // The subscription's connection exists before the strand.
    let _a = search(token_of("a".into()).await).await;

    proxy.strand();
    let token = token_of("b".into()).await;
    let stranded = Instant::now();
    let _b = search(token).await;
    assert!(
        stranded.elapsed() < Duration::from_secs(9),
        "the start took {:?}",
        stranded.elapsed()
    );
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(
        &crate::harness::redis_url(),
        &prefix,
    );
}

/// A silent connection is found without a request waiting on it: the
/// connection's health check replaces it, so the first request after a
/// quiet strand is answered (before, it waited out its command timeout and
/// was refused `503`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_redis_connection_is_replaced_while_no_request_waits() {
    let (proxy, via) = redis_through_proxy().await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, _database) = database(None).await;
    let app = app_within(&db_url, &via, &prefix, Duration::from_secs(10)).await;
    let (project, key) = studio(&app).await;
    let tickets = format!("/v1/projects/{project}/tickets");
    let made = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "a")),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    proxy.strand();
    // A check every 5 s, answered within the command timeout (1 s here).
    tokio::time::sleep(Duration::from_millis(7500)).await;
    let after = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "b")),
    )
    .await;
    assert_eq!(after.status, StatusCode::CREATED, "{}", after.body);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(
        &crate::harness::redis_url(),
        &prefix,
    );
}
