//! The worker's `--metrics-listen` server (docs/operations.md, 'Metrics'
//! and 'Liveness'): `GET /metrics`, and `GET /healthz`, the liveness probe
//! of the Helm chart's worker Deployment (docs/deployment.md).

use matchplane_store::tickets::TicketStore;
use metrics_exporter_prometheus::PrometheusHandle;
use sea_orm::DatabaseConnection;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// `matchplane_dependency_up{dependency}`: 1 when the dependency answered
/// the last scrape's check, else 0 (docs/operations.md, 'Metrics'), as
/// the API's gauge of the same name.
pub const DEPENDENCY_UP: &str = "matchplane_dependency_up";

/// What each scrape of `/metrics` checks: the database and the live store
/// (the readiness check of the API's `/readyz`, one read each).
#[derive(Clone)]
pub struct Dependencies {
    /// The database.
    pub db: DatabaseConnection,
    /// The live store (Redis).
    pub live: Arc<dyn TicketStore>,
}

/// Checks the database and the live store
/// ([`matchplane_store::health::check`], each within 2 s) and sets
/// [`DEPENDENCY_UP`] for each (`database`, `redis`); answers both
/// outcomes (`true`: up).
pub async fn check_dependencies(deps: &Dependencies) -> (bool, bool) {
    let (db, live) = matchplane_store::health::check(&deps.db, &*deps.live).await;
    let (db, live) = (db.is_ok(), live.is_ok());
    metrics::gauge!(DEPENDENCY_UP, "dependency" => "database").set(f64::from(u8::from(db)));
    metrics::gauge!(DEPENDENCY_UP, "dependency" => "redis").set(f64::from(u8::from(live)));
    (db, live)
}

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
/// process's figures (`process_*`: CPU, memory, threads, open files) and,
/// with `deps`, the dependencies' health ([`check_dependencies`]) into
/// the installed recorder.
///
/// # Errors
/// An IO error of the server.
pub async fn serve(
    listener: TcpListener,
    handle: PrometheusHandle,
    deps: Option<Dependencies>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let process = metrics_process::Collector::default();
    process.describe();
    metrics::describe_gauge!(
        DEPENDENCY_UP,
        "1 when the dependency answered this worker's last check (each scrape), else 0"
    );
    let app = axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let (handle, process, deps) = (handle.clone(), process.clone(), deps.clone());
                async move {
                    process.collect();
                    if let Some(deps) = &deps {
                        check_dependencies(deps).await;
                    }
                    handle.render()
                }
            }),
        )
        .route("/healthz", axum::routing::get(healthz));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
