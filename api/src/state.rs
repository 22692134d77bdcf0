//! [`AppState`]: what every handler shares, and [`ApiConfig`], the
//! operator's settings, parsed once at start-up.

use crate::auth::KeyCache;
use crate::play::ratings::StoredRatings;
use crate::play::{Play, PlaySettings};
use crate::rate_limit::{PreviewGate, ProjectLimiter, SimulationGate};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use sea_orm::DatabaseConnection;
use std::sync::Arc;

/// Operator settings of the API (docs/api-keys.md, docs/game-modes.md).
#[derive(Clone, Default)]
pub struct ApiConfig {
    /// `MATCHPLANE_OPERATOR_TOKEN`; `None` disables operator routes (401).
    pub operator_token: Option<String>,
    /// `MATCHPLANE_OPERATOR_TOKEN_PREVIOUS`: the token being rotated out,
    /// accepted beside `operator_token` (and only with one set).
    pub operator_token_previous: Option<String>,
    /// `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS`: allow private addresses and `http`.
    pub allow_private_webhooks: bool,
    /// `MATCHPLANE_RECORDING_KEY`: the key of the recording's player-id
    /// hashes ([`crate::recording`]). `None`: [`crate::serve_on`] uses the
    /// installation's stored key; a router built without it hashes with a
    /// random key of its own.
    pub recording_key: Option<String>,
}

impl std::fmt::Debug for ApiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiConfig")
            .field(
                "operator_token",
                &self.operator_token.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "operator_token_previous",
                &self.operator_token_previous.as_ref().map(|_| "<redacted>"),
            )
            .field("allow_private_webhooks", &self.allow_private_webhooks)
            .field(
                "recording_key",
                &self.recording_key.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The most a request may take before it is answered `503
/// SERVICE_UNAVAILABLE` ([`crate::deadline`]), unless set otherwise.
pub const DEFAULT_REQUEST_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Latency histogram buckets (seconds).
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// Shared state of the router: one reference count to clone (axum clones it
/// for every extractor and middleware of every request), fields reached
/// through `Deref` to [`SharedState`].
#[derive(Clone)]
pub struct AppState(Arc<SharedState>);

impl std::ops::Deref for AppState {
    type Target = SharedState;

    fn deref(&self) -> &SharedState {
        &self.0
    }
}

/// What [`AppState`] holds.
#[derive(Clone)]
pub struct SharedState {
    /// The control-plane database.
    pub db: DatabaseConnection,
    /// Operator settings.
    pub config: Arc<ApiConfig>,
    /// SHA-256 of the operator token, and of the one being rotated out
    /// when set, taken once: each request compares its credential's
    /// digest with each in constant time. Empty: no operator.
    pub operator_digests: Vec<crate::credentials::CredentialDigest>,
    /// Recently authenticated keys.
    pub keys: Arc<KeyCache>,
    /// Per-project token buckets.
    pub limiter: Arc<ProjectLimiter>,
    /// The config previews' own limits (per-project buckets, a
    /// process-wide gate).
    pub preview: Arc<PreviewGate>,
    /// Simulations and replays running at once, per project and in the
    /// process.
    pub simulations: Arc<SimulationGate>,
    /// This router's metrics recorder (not a global one, so tests can run
    /// several routers in one process).
    pub recorder: Arc<PrometheusRecorder>,
    /// Handles of the request metrics, registered once each.
    pub request_metrics: Arc<crate::observe::RequestMetrics>,
    /// The live-ops metrics' handles (rate limits, sockets, dependencies,
    /// the process), registered at 0 in `recorder`.
    pub ops: Arc<crate::observe::LiveOps>,
    /// Renders `recorder` as Prometheus text.
    pub metrics: PrometheusHandle,
    /// The worker's metrics when it runs in this process (`matchplane
    /// dev`): appended to `GET /metrics`.
    pub worker_metrics: Option<PrometheusHandle>,
    /// The player's side: pool and ticket stores (in memory unless set
    /// with [`AppState::with_play`]), config cache, search timing.
    pub play: Arc<Play>,
    /// The most a request may take ([`crate::deadline`]);
    /// [`DEFAULT_REQUEST_DEADLINE`] unless set with
    /// [`AppState::with_request_deadline`].
    pub request_deadline: std::time::Duration,
}

impl AppState {
    /// State over `db` with `config`.
    pub fn new(db: DatabaseConnection, config: ApiConfig) -> Self {
        let builder = PrometheusBuilder::new();
        let builder = match builder.set_buckets(&LATENCY_BUCKETS) {
            Ok(with_buckets) => with_buckets,
            Err(_) => PrometheusBuilder::new(),
        };
        let recorder = builder.build_recorder();
        metrics::with_local_recorder(&recorder, crate::observe::describe);
        let metrics = recorder.handle();
        let ops = crate::observe::LiveOps::register(&recorder);
        Self(Arc::new(SharedState {
            operator_digests: config
                .operator_token
                .iter()
                .chain(
                    config
                        .operator_token
                        .as_ref()
                        .and(config.operator_token_previous.as_ref()),
                )
                .map(|t| crate::credentials::digest(t))
                .collect(),
            config: Arc::new(config),
            keys: Arc::new(KeyCache::default()),
            limiter: Arc::new(ProjectLimiter::counting(ops.requests_limited.clone())),
            preview: Arc::new(PreviewGate::counting(ops.previews_limited.clone())),
            simulations: Arc::new(
                SimulationGate::default().counting(ops.simulations_limited.clone()),
            ),
            recorder: Arc::new(recorder),
            request_metrics: Arc::default(),
            ops: Arc::new(ops),
            metrics,
            worker_metrics: None,
            play: Arc::new(
                Play::in_memory(PlaySettings::default())
                    .with_ratings(Arc::new(StoredRatings::new(db.clone()))),
            ),
            db,
            request_deadline: DEFAULT_REQUEST_DEADLINE,
        }))
    }

    /// The same state answering `503` to a request not done within
    /// `deadline` (at least 1 ms).
    pub fn with_request_deadline(self, deadline: std::time::Duration) -> Self {
        let mut shared = Arc::unwrap_or_clone(self.0);
        shared.request_deadline = deadline.max(std::time::Duration::from_millis(1));
        Self(Arc::new(shared))
    }

    /// The same state with the in-process worker's metrics (`matchplane
    /// dev`), which `GET /metrics` then serves after the API's own.
    pub fn with_worker_metrics(self, handle: PrometheusHandle) -> Self {
        let mut shared = Arc::unwrap_or_clone(self.0);
        shared.worker_metrics = Some(handle);
        Self(Arc::new(shared))
    }

    /// The same state over other live stores (Redis in the service).
    pub fn with_play(self, play: Arc<Play>) -> Self {
        let mut shared = Arc::unwrap_or_clone(self.0);
        shared.play = play;
        Self(Arc::new(shared))
    }
}
