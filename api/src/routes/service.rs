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
pub struct Health {
    /// `ok`, `ready` or `unavailable`.
    pub status: &'static str,
    /// `ok` or `unreachable` (readiness only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<&'static str>,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "The process is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok",
        database: None,
    })
}

/// The database answers (Redis joins this check once the API uses it).
#[utoipa::path(get, path = "/readyz", tag = "service",
    responses(
        (status = 200, description = "Ready to serve", body = Health),
        (status = 503, description = "A dependency is unreachable", body = Health)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    match state.db.ping().await {
        Ok(()) => (
            StatusCode::OK,
            Json(Health {
                status: "ready",
                database: Some("ok"),
            }),
        ),
        Err(err) => {
            tracing::warn!(error = %err, "readiness: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(Health {
                    status: "unavailable",
                    database: Some("unreachable"),
                }),
            )
        }
    }
}

/// Prometheus text: request counts by route and status, latency histogram.
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses((status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    state.metrics.run_upkeep();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
