//! Keys and configs through a PostgreSQL outage: a key and a mode used
//! before the database went away keep creating tickets while it is gone
//! (their last value answers for a bounded time), `/readyz` says
//! `degraded` naming the database, and a read-only database (a failover)
//! never fails a key check; a search claimed into a match not stored yet
//! reads `MATCH_PENDING` while the database is gone.
//!
//! Before: once the one-second cache ran out, ticket creation answered
//! `503` for the whole outage, `/readyz` answered `503` although the
//! instance could serve, and every key request on a read-only database
//! failed because the key check wrote `last_used_at`; a claimed search's
//! status answered `503` until the database was back.

use crate::fault_proxy::FaultProxy;
use crate::harness::{redis_url, solo};
use crate::outages::{app, app_within, database, send, studio};
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
    // Each waited at most a second for the database (docs/operations.md,
    // "What losing a dependency costs"); the rest is margin for a loaded
    // machine.
    let slowest = waves.iter().map(|got| got.took).max().unwrap();
    assert!(
        slowest < Duration::from_secs(3),
        "a request took {slowest:?}"
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

/// Two searches the worker claimed into a match it could not store yet
/// (PostgreSQL is gone) read `searching` with `MATCH_PENDING`, to the
/// player's poll and the studio alike, for as long as the outage lasts
/// (docs/operations.md). Before: `503` for the whole outage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_search_reads_match_pending_through_a_postgres_outage() {
    use matchplane_store::pool::{Claim, ModeKey, RedisPoolConfig};
    let proxy = FaultProxy::start(&postgres_host()).await;
    let (db_url, database) = database(Some(&proxy)).await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    // A studio's read after the key's cache ran out waits out one failed
    // key read and one failed match read (1 s each here) before it answers.
    let app = app_within(&db_url, &redis_url(), &prefix, Duration::from_secs(5)).await;
    let (project, key) = studio(&app).await;
    let mut searches = Vec::new();
    for player in ["a", "b"] {
        let path = format!("/v1/projects/{project}/tickets");
        let made = send(
            &app,
            Method::POST,
            &path,
            Some(&key),
            Some(solo("duel", player)),
        )
        .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        let token = made.body["token"].as_str().unwrap().to_owned();
        let ticket = made.body["ticketId"].as_str().unwrap().to_owned();
        let body = serde_json::json!({ "ticket": token });
        let started = send(&app, Method::POST, "/v1/searches", None, Some(body)).await;
        assert_eq!(started.status, StatusCode::ACCEPTED, "{}", started.body);
        searches.push((player, ticket, token));
    }
    // The worker claims them (another process over the same Redis).
    let mut config = RedisPoolConfig::new(redis_url());
    config.prefix = prefix.clone();
    let worker = matchplane_api::play::connect_redis_with(config, crate::harness::fast())
        .await
        .unwrap();
    let mode = ModeKey::new(&project, "duel");
    let lease = worker
        .pool
        .acquire_lease(&mode, "w", Duration::from_secs(5));
    let claim = Claim {
        match_id: "mat_1".into(),
        ticket_ids: searches.iter().map(|s| s.1.clone()).collect(),
        player_ids: searches.iter().map(|s| s.0.to_owned()).collect(),
        record_json: "{}".into(),
    };
    let lease = lease.await.unwrap().unwrap();
    worker.pool.claim(&mode, lease, &claim).await.unwrap();

    proxy.drop_all();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for (_, ticket, token) in &searches {
        let path = format!("/v1/projects/{project}/tickets/{ticket}");
        let studio = send(&app, Method::GET, &path, Some(&key), None).await;
        let request = axum::http::Request::get(format!("/v1/searches/{ticket}"))
            .header("authorization", format!("Ticket {token}"))
            .body(axum::body::Body::empty())
            .unwrap();
        let polled = tower::ServiceExt::oneshot(app.clone(), request)
            .await
            .unwrap();
        let status = polled.status();
        let bytes = http_body_util::BodyExt::collect(polled.into_body())
            .await
            .unwrap();
        let player: serde_json::Value = serde_json::from_slice(&bytes.to_bytes()).unwrap();
        for (answer, body) in [(studio.status, &studio.body), (status, &player)] {
            assert_eq!(answer, StatusCode::OK, "{body}");
            assert_eq!(body["status"], "searching", "{body}");
            assert_eq!(body["waitingReason"]["code"], "MATCH_PENDING", "{body}");
        }
    }
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}
