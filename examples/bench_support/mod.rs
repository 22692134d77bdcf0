//! What the benchmarks in `examples/` share: the real router in process on
//! the PostgreSQL of `DATABASE_URL` (migrated) and the Redis of
//! `REDIS_URL`, with a tier no load reaches, a project on it and the
//! project's key; and one way to call it.
//!
//! Each benchmark uses only some of it, hence the module-wide `dead_code`
//! allowance.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use matchplane_api::play::{connect_redis, Play, PlaySettings};
use matchplane_api::{router, ApiConfig, AppState};
use sea_orm::DatabaseConnection;
use serde_json::{json, Value};
use std::sync::Arc;
use tower::ServiceExt;

/// The operator token of the benchmarks' API.
pub const OPERATOR: &str = "bench-operator";

/// The API of one benchmark run, and the project it runs in.
pub struct Bench {
    /// The migrated database.
    pub db: DatabaseConnection,
    /// The pool and ticket stores on Redis.
    pub play: Arc<Play>,
    /// The router's state (its metrics, for one).
    pub state: AppState,
    /// The real router.
    pub app: Router,
    /// `prj_…` of the benchmark's project, on tier `bench`.
    pub project: String,
    /// `Bearer <key>` of the project.
    pub key: String,
}

/// Connects to `DATABASE_URL` and `REDIS_URL` (Redis keys under `prefix`),
/// migrates, builds the router and creates tier `bench` (enterprise's
/// floors, limits the load cannot reach: answers of 429 would count as
/// requests served), project `bench` on it and a key.
pub async fn start(prefix: &str, settings: PlaySettings, recording_key: Option<&str>) -> Bench {
    let database = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let redis = std::env::var("REDIS_URL").expect("REDIS_URL");
    let db = matchplane_store::db::connect(&database).await.unwrap();
    matchplane_migrations::migrate(&db).await.unwrap();
    let play = Arc::new(connect_redis(&redis, prefix, settings).await.unwrap());
    let config = ApiConfig {
        operator_token: Some(OPERATOR.into()),
        operator_token_previous: None,
        allow_private_webhooks: false,
        recording_key: recording_key.map(str::to_owned),
    };
    let state = AppState::new(db.clone(), config).with_play(play.clone());
    let app = router(state.clone());
    let op = format!("Bearer {OPERATOR}");
    call(
        &app,
        Method::PUT,
        "/v1/tiers/bench",
        &op,
        json!({"minCycleDurationSeconds": 0.1, "minBaseTolerance": 0,
               "minExpansionMultiplier": 1, "maxMatchSize": 200, "maxGameModes": 1000,
               "maxConcurrentSearches": 100_000_000, "requestsPerSecond": 10_000_000,
               "maxPendingTickets": 1_000_000_000_u64, "retentionDays": 365}),
    )
    .await;
    let project = call(
        &app,
        Method::POST,
        "/v1/projects",
        &op,
        json!({"name": "bench", "tier": "bench"}),
    )
    .await;
    let project = project["id"].as_str().unwrap().to_owned();
    let key = call(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/keys"),
        &op,
        json!({"name": "bench"}),
    )
    .await;
    let key = format!("Bearer {}", key["key"].as_str().unwrap());
    Bench {
        db,
        play,
        state,
        app,
        project,
        key,
    }
}

/// Sends `body` (JSON) to `path` with `auth`; the status and the answer
/// (`null` when it is not JSON).
pub async fn send(
    app: &Router,
    method: Method,
    path: &str,
    auth: &str,
    body: Value,
) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, auth)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app.clone().oneshot(req).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// [`send`], which must succeed; the answer.
pub async fn call(app: &Router, method: Method, path: &str, auth: &str, body: Value) -> Value {
    let (status, value) = send(app, method, path, auth, body).await;
    assert!(status.is_success(), "{path}: {status} {value}");
    value
}
