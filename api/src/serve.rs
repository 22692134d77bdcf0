//! Running the API: refuse a database whose migrations are behind
//! (`matchplane_store::db`), serve until the `shutdown` future completes.

use crate::play::Play;
use crate::state::{ApiConfig, AppState};
use matchplane_store::db::{ensure_migrated, SchemaError};
use matchplane_store::repos::instance_keys;
use metrics_exporter_prometheus::PrometheusHandle;
use sea_orm::{DatabaseConnection, DbErr};
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

mod hyper_errors;
mod listen;

pub use listen::ConnectionLimits;

/// What `matchplane api` needs.
#[derive(Clone)]
pub struct ServeConfig {
    /// Operator settings.
    pub api: ApiConfig,
    /// The in-process worker's metrics (`matchplane dev`), served on the
    /// API's `GET /metrics` after its own; `None` for `matchplane api`.
    pub worker_metrics: Option<PrometheusHandle>,
    /// Header, body and idle timeouts and the connection cap.
    pub connections: ConnectionLimits,
    /// The most a request may take before it is answered `503` (10 s).
    pub request_deadline: std::time::Duration,
}

impl Default for ServeConfig {
    /// Default operator settings, no worker metrics, the default connection
    /// limits and request deadline.
    fn default() -> Self {
        Self {
            api: ApiConfig::default(),
            worker_metrics: None,
            connections: ConnectionLimits::default(),
            request_deadline: crate::state::DEFAULT_REQUEST_DEADLINE,
        }
    }
}

impl std::fmt::Debug for ServeConfig {
    /// Says whether the worker's metrics are served, not their handle.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeConfig")
            .field("api", &self.api)
            .field("worker_metrics", &self.worker_metrics.is_some())
            .field("connections", &self.connections)
            .field("request_deadline", &self.request_deadline)
            .finish()
    }
}

/// Why the API could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The database could not be reached.
    #[error("cannot connect to the database: {0}")]
    Connect(DbErr),
    /// The schema is older than this build.
    #[error("the database is {0} migration(s) behind this build; run `matchplane migrate` first")]
    MigrationsBehind(usize),
    /// The installation's stored recording key could not be read or
    /// stored (`matchplane_store::repos::instance_keys`).
    #[error("cannot read the stored recording key: {0}")]
    RecordingKey(matchplane_store::repos::StoreError),
    /// Listening or serving failed.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<SchemaError> for ServeError {
    fn from(err: SchemaError) -> Self {
        match err {
            SchemaError::Connect(err) => Self::Connect(err),
            SchemaError::MigrationsBehind(n) => Self::MigrationsBehind(n),
        }
    }
}

/// Serves the API on `listener` over the live stores `play` (`matchplane
/// api` passes the Redis ones, see [`crate::play::connect_redis`]) until
/// `shutdown` completes, then finishes in-flight requests, ends the
/// searches of its open WebSockets (each client told to search again, see
/// [`crate::play::sockets`]) and returns. Without a configured recording
/// key, the installation's stored one hashes the recorded player ids
/// (docs/retention.md, "Erasing a player"), as in every other process.
/// (The
/// worker ends the searches nobody ends: expiry, deleted modes and
/// projects.) The database connection is
/// the caller's (`matchplane api` and `dev` share theirs with the stored
/// ratings and the worker rather than open a second pool).
///
/// # Errors
/// [`ServeError`] when the database is behind, the stored recording key
/// cannot be read, or serving fails.
pub async fn serve_on(
    db: DatabaseConnection,
    config: ServeConfig,
    play: Arc<Play>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    ensure_migrated(&db).await?;
    let mut api = config.api;
    if api.recording_key.is_none() {
        let stored = instance_keys::get_or_create(&db, instance_keys::RECORDING)
            .await
            .map_err(ServeError::RecordingKey)?;
        api.recording_key = Some(stored);
    }
    let held = play.clone();
    let mut state = AppState::new(db, api)
        .with_play(play)
        .with_request_deadline(config.request_deadline);
    if let Some(handle) = config.worker_metrics {
        state = state.with_worker_metrics(handle);
    }
    let app = crate::router(state);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "api listening");
    }
    listen::serve(listener, app, config.connections, shutdown).await?;
    // The WebSocket searches, which the HTTP server's own shutdown does not
    // see (an upgraded connection leaves it): each ends its search and
    // tells its client to search again (`crate::play::sockets`).
    let left = held.sockets.stop(SOCKET_GRACE).await;
    // Their cancels are recorded before the process goes (docs/tuning.md,
    // "Recording").
    if !held.recorder.flush(RECORDING_GRACE).await {
        tracing::warn!("api stopping: the search recording's last rows were not written in time");
    }
    match left {
        0 => tracing::info!("api stopped"),
        left => tracing::warn!(left, "api stopped with searches it could not end in time"),
    }
    Ok(())
}

/// How long a stopping server waits for its WebSocket searches to end.
const SOCKET_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// How long a stopping server then waits for the search recording's
/// queued rows to be written.
const RECORDING_GRACE: std::time::Duration = std::time::Duration::from_secs(2);
