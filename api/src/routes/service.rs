//! Service routes (docs/api-tour.md): `/healthz`, `/readyz`, `/metrics`.

use crate::problem::{KeepBody, UNAVAILABLE_RETRY_AFTER_SECONDS};
use crate::state::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use std::time::Duration;
use utoipa::ToSchema;

/// Health or readiness of the process and what it depends on.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"status": "ready", "database": "ok", "redis": "ok", "liveStore": "redis"}))]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok`, `ready`, `degraded` (the database is unreachable: keys and
    /// configs answer from this instance's cache, see the operations
    /// guide) or `unavailable` (Redis is unreachable).
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

/// How long each readiness check may take: a dependency that does not
/// answer within it counts as unreachable, so `/readyz` itself never hangs.
pub const READINESS_CHECK_TIMEOUT: Duration = matchplane_store::health::CHECK_TIMEOUT;

/// The database and the live store (Redis) answer, each within
/// [`READINESS_CHECK_TIMEOUT`]. The database unreachable is `200` with
/// `status` `degraded` (this instance keeps serving known keys and configs
/// from its cache, and players' searches from Redis); Redis unreachable is
/// `503` with this same body, naming the dependency that is
/// `unreachable`, and `Retry-After`.
#[utoipa::path(get, path = "/readyz", tag = "service", operation_id = "getReadiness",
    responses(
        (status = 200, description = "Ready to serve; `degraded` when the database is unreachable and known keys and configs answer from cache", body = Health),
        (status = 503, description = "The live store (Redis) is unreachable: the body names it (`unreachable`), `Retry-After` says when to ask again", body = Health,
            headers(("Retry-After" = u64, description = "Seconds to wait before asking again")))))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let (db, live) = check_dependencies(&state).await;
    if let Err(err) = &db {
        tracing::warn!(error = %err, "readiness: database unreachable");
    }
    if let Err(err) = &live {
        tracing::warn!(error = %err, "readiness: Redis unreachable");
    }
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let store = state.play.tickets.live_store();
    // Without the database this instance still serves from its cache;
    // without the live store it serves nothing of the players' side.
    let ready = live.is_ok();
    let body = Json(Health {
        status: match (ready, db.is_ok()) {
            (false, _) => "unavailable",
            (true, true) => "ready",
            (true, false) => "degraded",
        },
        database: Some(word(db.is_ok())),
        redis: (store == "redis").then(|| word(live.is_ok())),
        live_store: Some(store),
    });
    if ready {
        return (StatusCode::OK, body).into_response();
    }
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECONDS)],
        body,
    )
        .into_response();
    // The documented body, not the generic problem.
    response.extensions_mut().insert(KeepBody);
    response
}

/// The readiness checks of the database and the live store
/// ([`matchplane_store::health::check`], each within
/// [`READINESS_CHECK_TIMEOUT`]); their outcome also sets the
/// dependency-health gauges (`crate::observe::DEPENDENCY_UP`).
async fn check_dependencies(state: &AppState) -> (Result<(), String>, Result<(), String>) {
    let (db, live) = matchplane_store::health::check(&state.db, &*state.play.tickets).await;
    state.ops.dependencies(db.is_ok(), live.is_ok());
    (db, live)
}

/// Prometheus text: request counts by route and status, latency histogram,
/// rate-limited requests, open WebSocket searches, the dependencies' health
/// (checked at each scrape), the searches this instance ended, process
/// figures; in `matchplane dev`, the in-process worker's metrics too
/// (cycles, pool sizes, waiting reasons, matches and their quality,
/// webhook deliveries and backlog).
#[utoipa::path(get, path = "/metrics", tag = "service", operation_id = "getMetrics",
    responses((status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // A scrape reads the dependencies' health and the process's figures
    // fresh, also where nothing probes `/readyz`.
    let _health = check_dependencies(&state).await;
    state.ops.collect_process(&state.recorder);
    state.metrics.run_upkeep();
    let mut text = state.metrics.render();
    if let Some(worker) = &state.worker_metrics {
        worker.run_upkeep();
        // Both count some families (search ends, releases) under the same
        // names: one exposition declares each once, same series summed.
        text = crate::observe::merge_expositions(&text, &worker.render());
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text)
}
