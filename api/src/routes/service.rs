//! Service routes (SPEC 7): `/healthz`, `/readyz`, `/metrics`.

use crate::state::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

/// Health or readiness of the process and what it depends on.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"status": "ready", "database": "ok", "redis": "ok", "liveStore": "redis"}))]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok`, `ready` or `unavailable`.
    pub status: &'static str,
    /// `ok` or `unreachable` (readiness only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<&'static str>,
    /// `ok` or `unreachable`: Redis, the live store of pools and tickets
    /// (readiness only, and only when the live store is Redis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis: Option<&'static str>,
    /// Where pools and tickets live: `redis`, or `in-process` in
    /// `matchplane dev` without `--redis-url` (readiness only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_store: Option<&'static str>,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "service", operation_id = "getHealth",
    responses((status = 200, description = "The process is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok",
        database: None,
        redis: None,
        live_store: None,
    })
}

/// The database and the live store (Redis) answer.
#[utoipa::path(get, path = "/readyz", tag = "service", operation_id = "getReadiness",
    responses(
        (status = 200, description = "Ready to serve", body = Health),
        (status = 503, description = "A dependency is unreachable", body = Health)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let (db, live) = tokio::join!(state.db.ping(), state.play.tickets.ping());
    if let Err(err) = &db {
        tracing::warn!(error = %err, "readiness: database unreachable");
    }
    if let Err(err) = &live {
        tracing::warn!(error = %err, "readiness: Redis unreachable");
    }
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let store = state.play.tickets.live_store();
    let ready = db.is_ok() && live.is_ok();
    (
        if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        Json(Health {
            status: if ready { "ready" } else { "unavailable" },
            database: Some(word(db.is_ok())),
            redis: (store == "redis").then(|| word(live.is_ok())),
            live_store: Some(store),
        }),
    )
}

/// Prometheus text: request counts by route and status, latency histogram;
/// in `matchplane dev`, the in-process worker's metrics too (cycles, pool
/// sizes, matches, webhook deliveries).
#[utoipa::path(get, path = "/metrics", tag = "service", operation_id = "getMetrics",
    responses((status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    state.metrics.run_upkeep();
    let mut text = state.metrics.render();
    if let Some(worker) = &state.worker_metrics {
        worker.run_upkeep();
        // Metric names are disjoint (`matchplane_http_*` here), so the two
        // expositions concatenate into one valid one.
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&worker.render());
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text)
}
