//! The worker's `--metrics-listen` server (docs/operations.md, 'Metrics'
//! and 'Liveness'): `GET /metrics`, and `GET /healthz`, the liveness probe
//! of the Helm chart's worker Deployment (docs/deployment.md).

use metrics_exporter_prometheus::PrometheusHandle;
use std::future::Future;
use tokio::net::TcpListener;

/// `GET /healthz`'s answer: the process is alive and its runtime answers.
/// It reads nothing (no Redis, no PostgreSQL), so an outage of either
/// never fails it: a worker waits such an outage out (docs/operations.md,
/// 'What losing a dependency costs') instead of being restarted by its
/// liveness probe.
async fn healthz() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "status": "ok" }))
}

/// Serves `GET /metrics` (Prometheus text of `handle`) and `GET /healthz`
/// (`200` `{"status":"ok"}` while the process and its runtime answer) on
/// `listener` until `shutdown` completes. Each scrape first reads the
/// process's figures (`process_*`: CPU, memory, threads, open files) into
/// the installed recorder.
///
/// # Errors
/// An IO error of the server.
pub async fn serve(
    listener: TcpListener,
    handle: PrometheusHandle,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let process = metrics_process::Collector::default();
    process.describe();
    let app = axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let (handle, process) = (handle.clone(), process.clone());
                async move {
                    process.collect();
                    handle.render()
                }
            }),
        )
        .route("/healthz", axum::routing::get(healthz));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
