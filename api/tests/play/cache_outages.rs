//! Keys and configs through a PostgreSQL outage: a key and a mode used
//! before the database went away keep creating tickets while it is gone
//! (their last value answers for a bounded time), `/readyz` says
//! `degraded` naming the database, and a read-only database (a failover)
//! never fails a key check.
//!
//! Before: once the one-second cache ran out, ticket creation answered
//! `503` for the whole outage, `/readyz` answered `503` although the
//! instance could serve, and every key request on a read-only database
//! failed because the key check wrote `last_used_at`.

use crate::fault_proxy::FaultProxy;
use crate::harness::{redis_url, solo};
use crate::outages::{app, database, send, studio};
use axum::http::{Method, StatusCode};
use sea_orm::{ConnectionTrait, Database};
use std::time::Duration;

fn postgres_host() -> String {
    matchplane_store::test_support::host_port(&matchplane_store::test_support::database_url())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_key_creates_tickets_through_a_postgres_outage() {
    let proxy = FaultProxy::start(&postgres_host()).await;
    let (db_url, database) = database(Some(&proxy)).await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let app = app(&db_url, &redis_url(), &prefix).await;
    let (project, key) = studio(&app).await;
    let tickets = format!("/v1/projects/{project}/tickets");
    let before = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "a")),
    )
    .await;
    assert_eq!(before.status, StatusCode::CREATED, "{}", before.body);

    // PostgreSQL stops; the one-second cache runs out.
    proxy.drop_all();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for player in ["b", "c"] {
        let during = send(
            &app,
            Method::POST,
            &tickets,
            Some(&key),
            Some(solo("duel", player)),
        )
        .await;
        assert_eq!(during.status, StatusCode::CREATED, "{}", during.body);
        assert!(during.body["token"].is_string(), "{}", during.body);
        tokio::time::sleep(Duration::from_millis(1_100)).await;
    }
    // A key never seen is still refused with the outage, not let in.
    let unknown = send(
        &app,
        Method::POST,
        &tickets,
        Some("mp_sk_neverissuedneverissuedneverissued"),
        Some(solo("duel", "d")),
    )
    .await;
    assert_eq!(
        unknown.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        unknown.body
    );

    let ready = send(&app, Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(ready.body["status"], "degraded", "{}", ready.body);
    assert_eq!(ready.body["database"], "unreachable", "{}", ready.body);
    assert_eq!(ready.body["redis"], "ok", "{}", ready.body);
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}

/// PostgreSQL black-holed (connections taken, nothing answered): many
/// ticket creations at once with a known key and mode all succeed, those
/// that arrive while another request's reload of the key or mode hangs
/// included. Before: most got `503` (they waited on the hanging reload,
/// which never failed, until their deadline).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tickets_with_a_known_key_survive_a_postgres_black_hole() {
    let proxy = FaultProxy::start(&postgres_host()).await;
    let (db_url, database) = database(Some(&proxy)).await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let app = app(&db_url, &redis_url(), &prefix).await;
    let (project, key) = studio(&app).await;
    let tickets = format!("/v1/projects/{project}/tickets");
    let before = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "warm")),
    )
    .await;
    assert_eq!(before.status, StatusCode::CREATED, "{}", before.body);

    proxy.stall();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let mut waves = Vec::new();
    for wave in 0..3 {
        let during = (0..10).map(|i| {
            let (app, tickets, key) = (app.clone(), tickets.clone(), key.clone());
            async move {
                let body = solo("duel", &format!("p{wave}x{i}"));
                send(&app, Method::POST, &tickets, Some(&key), Some(body)).await
            }
        });
        waves.extend(futures::future::join_all(during).await);
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let refused: Vec<_> = waves
        .iter()
        .filter(|got| got.status != StatusCode::CREATED)
        .map(|got| (got.status, got.body.clone()))
        .collect();
    assert!(
        refused.is_empty(),
        "{} of 30 refused: {refused:?}",
        refused.len()
    );
    proxy.drop_all();
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_never_fails_a_key_check() {
    let (db_url, database) = database(None).await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let writable = app(&db_url, &redis_url(), &prefix).await;
    let (project, key) = studio(&writable).await;

    // A failover: the database takes reads only; a new instance (every
    // connection new) checks the key.
    let admin = matchplane_store::test_support::database_url();
    let conn = Database::connect(&admin).await.unwrap();
    conn.execute_unprepared(&format!(
        "ALTER DATABASE \"{}\" SET default_transaction_read_only = on",
        database.name()
    ))
    .await
    .unwrap();
    conn.close().await.ok();
    let read_only = app(&db_url, &redis_url(), &prefix).await;
    let modes = send(
        &read_only,
        Method::GET,
        &format!("/v1/projects/{project}/game-modes"),
        Some(&key),
        None,
    )
    .await;
    assert_eq!(modes.status, StatusCode::OK, "{}", modes.body);
    let ticket = send(
        &read_only,
        Method::POST,
        &format!("/v1/projects/{project}/tickets"),
        Some(&key),
        Some(solo("duel", "a")),
    )
    .await;
    assert_eq!(ticket.status, StatusCode::CREATED, "{}", ticket.body);
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}

/// A key revoked elsewhere while the database was out is refused within a
/// second of the database being back: the cached key answers only while
/// the database cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_is_honoured_once_the_database_is_back() {
    let host = postgres_host();
    let proxy = FaultProxy::start(&host).await;
    let port = proxy.port;
    let (db_url, database) = database(Some(&proxy)).await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let app = app(&db_url, &redis_url(), &prefix).await;
    let (project, key) = studio(&app).await;
    let tickets = format!("/v1/projects/{project}/tickets");
    let before = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "z")),
    )
    .await;
    assert_eq!(before.status, StatusCode::CREATED, "{}", before.body);

    proxy.drop_all();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // Another instance revokes the key (straight in the database).
    let conn = Database::connect(database.url()).await.unwrap();
    conn.execute_unprepared("UPDATE api_keys SET revoked_at = now()")
        .await
        .unwrap();
    conn.close().await.ok();
    let during = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "a")),
    )
    .await;
    assert_eq!(during.status, StatusCode::CREATED, "{}", during.body);

    // The database is back: within about a second the key is refused.
    let _back = FaultProxy::start_on(&host, port).await;
    let started = std::time::Instant::now();
    let mut last = StatusCode::CREATED;
    while started.elapsed() < Duration::from_secs(4) {
        last = send(
            &app,
            Method::POST,
            &tickets,
            Some(&key),
            Some(solo("duel", "b")),
        )
        .await
        .status;
        if last == StatusCode::UNAUTHORIZED {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last, StatusCode::UNAUTHORIZED);
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "refused after {:?}",
        started.elapsed()
    );
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}
