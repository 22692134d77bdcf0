//! Outages answered honestly: with Redis stopped, or PostgreSQL
//! black-holed (a proxy in front of each that the test breaks), a request
//! that needs it is answered `503 SERVICE_UNAVAILABLE` with `Retry-After`
//! and a problem body within a bound, and `/readyz` answers with its
//! documented body naming the dependency (`503` for Redis, `200`
//! `degraded` for PostgreSQL: keys and configs answer from cache, see
//! `cache_outages`).
//!
//! Before: `500 INTERNAL` without `Retry-After` after about 9.5 s (Redis),
//! no answer for the whole outage (PostgreSQL), and `/readyz`'s body was
//! the generic problem.

use crate::fault_proxy::FaultProxy;
use crate::harness::{duel, fast, redis_url, solo, OPERATOR};
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use matchplane_api::play::connect_redis_with;
use matchplane_api::{router, ApiConfig, AppState};
use matchplane_store::db::DbTimeouts;
use matchplane_store::pool::RedisPoolConfig;
use matchplane_store::test_support::TestDatabase;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// What a request got, and how long it took.
pub(crate) struct Got {
    pub(crate) status: StatusCode,
    pub(crate) retry_after: Option<String>,
    pub(crate) content_type: String,
    pub(crate) body: Value,
    pub(crate) took: Duration,
}

pub(crate) async fn send(
    app: &Router,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Got {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let req = match body {
        Some(body) => req
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(serde_json::to_vec(&body).unwrap())),
        None => req.body(Body::empty()),
    }
    .unwrap();
    let started = Instant::now();
    // The test's own bound: far above what the fix allows.
    let response = tokio::time::timeout(Duration::from_secs(20), app.clone().oneshot(req))
        .await
        .expect("an answer within 20 s")
        .unwrap();
    let took = started.elapsed();
    let status = response.status();
    let header = |name| {
        response
            .headers()
            .get(name)
            .map(|v: &axum::http::HeaderValue| v.to_str().unwrap().to_owned())
    };
    let retry_after = header(header::RETRY_AFTER);
    let content_type = header(header::CONTENT_TYPE).unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Got {
        status,
        retry_after,
        content_type,
        body,
        took,
    }
}

pub(crate) fn assert_unavailable(got: &Got, bound: Duration) {
    assert_eq!(got.status, StatusCode::SERVICE_UNAVAILABLE, "{}", got.body);
    assert_eq!(got.body["code"], "SERVICE_UNAVAILABLE", "{}", got.body);
    assert_eq!(got.body["status"], 503);
    assert_eq!(got.content_type, "application/problem+json");
    assert!(got.retry_after.is_some(), "Retry-After");
    assert!(got.took < bound, "answered after {:?}", got.took);
}

/// A fresh migrated database (dropped with the guard), its URL through
/// `proxy`.
pub(crate) async fn database(proxy: Option<&FaultProxy>) -> (String, TestDatabase) {
    let database = TestDatabase::create("mp_t_").await;
    let db = database.connect().await;
    matchplane_migrations::migrate(&db).await.unwrap();
    db.close().await.ok();
    let direct = database.url();
    let via = match proxy {
        Some(proxy) => {
            let upstream = matchplane_store::test_support::host_port(
                &matchplane_store::test_support::database_url(),
            );
            direct.replacen(&upstream, &format!("127.0.0.1:{}", proxy.port), 1)
        }
        None => direct.to_owned(),
    };
    (via, database)
}

/// The app over `db_url` and the Redis at `redis`, with short timeouts
/// (1 s connects, a 2 s request deadline).
pub(crate) async fn app(db_url: &str, redis: &str, prefix: &str) -> Router {
    app_within(db_url, redis, prefix, Duration::from_secs(2)).await
}

/// [`app`] with a request deadline of `deadline`.
pub(crate) async fn app_within(
    db_url: &str,
    redis: &str,
    prefix: &str,
    deadline: Duration,
) -> Router {
    app_with(db_url, redis, prefix, deadline, fast()).await
}

/// [`app_within`] with the play settings `settings`.
pub(crate) async fn app_with(
    db_url: &str,
    redis: &str,
    prefix: &str,
    deadline: Duration,
    settings: matchplane_api::play::PlaySettings,
) -> Router {
    let redis_wait = Duration::from_secs(1);
    app_waiting(db_url, redis, prefix, deadline, settings, redis_wait).await
}

/// [`app_with`] whose Redis commands wait `redis_wait` for an answer.
pub(crate) async fn app_waiting(
    db_url: &str,
    redis: &str,
    prefix: &str,
    deadline: Duration,
    settings: matchplane_api::play::PlaySettings,
    redis_wait: Duration,
) -> Router {
    let timeouts = DbTimeouts {
        connect: Duration::from_secs(1),
        acquire: Duration::from_secs(1),
    };
    let db = matchplane_store::db::connect_with(db_url, timeouts)
        .await
        .unwrap();
    let mut config = RedisPoolConfig::new(redis);
    config.prefix = prefix.to_owned();
    config.connect_timeout = Duration::from_secs(1);
    config.response_timeout = redis_wait;
    let play = connect_redis_with(config, settings).await.unwrap();
    let state = AppState::new(
        db,
        ApiConfig {
            operator_token: Some(OPERATOR.to_owned()),
            operator_token_previous: None,
            allow_private_webhooks: false,
            recording_key: None,
        },
    )
    .with_play(std::sync::Arc::new(play))
    .with_request_deadline(deadline);
    router(state)
}

/// A fault proxy in front of the test Redis, and the Redis URL through it
/// (same database index).
pub(crate) async fn redis_through_proxy() -> (FaultProxy, String) {
    let upstream = redis_url();
    let rest = upstream.strip_prefix("redis://").unwrap();
    let (host, db_path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let proxy = FaultProxy::start(host).await;
    let via = format!("redis://127.0.0.1:{}{db_path}", proxy.port);
    (proxy, via)
}

/// A project, its key and a duel mode; returns (project, key).
pub(crate) async fn studio(app: &Router) -> (String, String) {
    let made = send(
        app,
        Method::POST,
        "/v1/projects",
        Some(OPERATOR),
        Some(json!({"name": "S", "tier": "pro"})),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let project = made.body["id"].as_str().unwrap().to_owned();
    let key = send(
        app,
        Method::POST,
        &format!("/v1/projects/{project}/keys"),
        Some(OPERATOR),
        Some(json!({"name": "b"})),
    )
    .await;
    let key = key.body["key"].as_str().unwrap().to_owned();
    let mode = send(
        app,
        Method::POST,
        &format!("/v1/projects/{project}/game-modes"),
        Some(&key),
        Some(duel("duel")),
    )
    .await;
    assert_eq!(mode.status, StatusCode::CREATED, "{}", mode.body);
    (project, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_answers_503_with_retry_after_at_once() {
    let (proxy, via) = redis_through_proxy().await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, database) = database(None).await;
    let app = app(&db_url, &via, &prefix).await;
    let (project, key) = studio(&app).await;
    let ok = send(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/tickets"),
        Some(&key),
        Some(solo("duel", "a")),
    )
    .await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.body);

    proxy.drop_all();
    let ticket = send(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/tickets"),
        Some(&key),
        Some(solo("duel", "b")),
    )
    .await;
    assert_unavailable(&ticket, Duration::from_secs(5));
    let ready = send(&app, Method::GET, "/readyz", None, None).await;
    assert_eq!(
        ready.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        ready.body
    );
    assert!(ready.retry_after.is_some(), "Retry-After");
    assert_eq!(ready.content_type, "application/json");
    assert_eq!(ready.body["status"], "unavailable", "{}", ready.body);
    assert_eq!(ready.body["redis"], "unreachable", "{}", ready.body);
    assert_eq!(ready.body["database"], "ok", "{}", ready.body);
    assert!(ready.took < Duration::from_secs(5), "{:?}", ready.took);
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_black_holed_answers_503_within_the_deadline() {
    let admin = matchplane_store::test_support::database_url();
    let host = matchplane_store::test_support::host_port(&admin);
    let proxy = FaultProxy::start(&host).await;
    let (db_url, database) = database(Some(&proxy)).await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let app = app(&db_url, &redis_url(), &prefix).await;
    let (_project, _key) = studio(&app).await;

    proxy.stall();
    let listed = send(&app, Method::GET, "/v1/projects", Some(OPERATOR), None).await;
    assert_unavailable(&listed, Duration::from_secs(6));
    // Degraded, not unready: known keys and configs answer from cache.
    let ready = send(&app, Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(ready.body["status"], "degraded", "{}", ready.body);
    assert_eq!(ready.body["database"], "unreachable", "{}", ready.body);
    assert_eq!(ready.body["redis"], "ok", "{}", ready.body);
    assert!(ready.took < Duration::from_secs(5), "{:?}", ready.took);
    proxy.drop_all();
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &prefix);
}

/// Redis restarted (every connection closed, the port back a moment
/// later): the first request after it is answered, not `503`: a command
/// on a connection the restart broke reconnects and is sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_after_a_redis_restart_is_answered() {
    let upstream = redis_url();
    let rest = upstream.strip_prefix("redis://").unwrap();
    let (host, db_path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let proxy = FaultProxy::start(host).await;
    let via = format!("redis://127.0.0.1:{}{db_path}", proxy.port);
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, database) = database(None).await;
    let app = app(&db_url, &via, &prefix).await;
    let (project, key) = studio(&app).await;
    let tickets = format!("/v1/projects/{project}/tickets");
    let ok = send(
        &app,
        Method::POST,
        &tickets,
        Some(&key),
        Some(solo("duel", "a")),
    )
    .await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.body);

    proxy.drop_all();
    let restarted = FaultProxy::start_on(host, proxy.port).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for player in ["b", "c"] {
        let ticket = send(
            &app,
            Method::POST,
            &tickets,
            Some(&key),
            Some(solo("duel", player)),
        )
        .await;
        assert_eq!(
            ticket.status,
            StatusCode::CREATED,
            "{player}: {}",
            ticket.body
        );
    }
    drop(restarted);
    drop(database);
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&upstream, &prefix);
}
