//! [`WorkerConfig`]: the worker's settings, parsed once by the binary and
//! passed down (STYLE 7).

use crate::retention::RetentionConfig;
use matchplane_store::pool::ModeKey;
use matchplane_webhook::{DeliveryConfig, Schedule};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Called when a cycle starts (`true`) and ends (`false`) on this worker;
/// tests use it to check that two workers never run one mode at once.
pub type CycleHook = Arc<dyn Fn(&ModeKey, bool, Instant) + Send + Sync>;

/// [`WorkerConfig::config_grace`]'s default: 10 minutes.
pub const DEFAULT_CONFIG_GRACE: Duration = Duration::from_secs(600);

/// Settings of one worker process.
#[derive(Clone)]
pub struct WorkerConfig {
    /// Names this worker as a lease owner and an outbox consumer; unique per
    /// replica (`wrk_<ulid>` by default).
    pub worker_id: String,
    /// How long a mode's lease lasts unless renewed: a cycle's renewal holds
    /// it for the cycle's pause plus half of this (at most 1.5x this), other
    /// renewals for this, each a third of it before it would end. A worker's
    /// heartbeat lasts this (or three `reconcile_interval`s if longer), so a
    /// killed worker's modes are taken over within about twice this.
    pub lease_ttl: Duration,
    /// How often the list of game modes is read again (docs/game-modes.md: a change is
    /// in force within one cycle plus this).
    pub reconcile_interval: Duration,
    /// How often the sweep passes over every pool ([`crate::sweep`]): due
    /// searches expire, and a deleted mode's or project's fail, within this.
    pub sweep_interval: Duration,
    /// An outbox entry read by a consumer and not acknowledged for this long
    /// is taken over by another (the first one died).
    pub outbox_min_idle: Duration,
    /// Outbox entries recorded per batch.
    pub outbox_batch: usize,
    /// Searches expired per cycle at most.
    pub expire_batch: usize,
    /// Store calls in flight at once when a cycle ends searches one by one
    /// (those a config change fails). Claims are batched apart from this.
    pub claim_concurrency: usize,
    /// The webhook HTTP client's settings (`MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS`).
    pub delivery: DeliveryConfig,
    /// The retry schedule (`MATCHPLANE_WEBHOOK_RETRY_SCALE`).
    pub schedule: Schedule,
    /// Attempts in flight per webhook endpoint (`host:port`), at most; 4 by
    /// default.
    pub per_endpoint: usize,
    /// Attempts in flight over all endpoints, at most; 256 by default. One
    /// project (studio) holds at most its share of them
    /// ([`crate::deliveries::project_share`]: a quarter, at least
    /// `per_endpoint`), however many endpoints it has, so every other
    /// project finds free slots.
    pub max_in_flight: usize,
    /// How long a taken delivery stays locked to this worker (renewed while
    /// its attempt runs); at least twice an attempt's timeout and
    /// [`crate::deliveries::LOCK_MARGIN`] (12 s with the 5 s timeout): a
    /// shorter one is raised to that, as an attempt is sent only while its
    /// lock has the timeout and the margin left.
    pub delivery_lock: Duration,
    /// Pause of the delivery loop when nothing is due.
    pub delivery_poll: Duration,
    /// How long a mode keeps cycling on its last known config while the
    /// database cannot be read (10 min by default): pools, claims and the
    /// outbox are in Redis, and the matches are stored once the database is
    /// back. Past this the mode pauses until a read succeeds.
    pub config_grace: Duration,
    /// How the retention pruning is paced ([`crate::retention`]).
    pub retention: RetentionConfig,
    /// Optional observer of cycle starts and ends.
    pub on_cycle: Option<CycleHook>,
    /// `MATCHPLANE_RECORDING_KEY`: the key of the recorded player-id hashes,
    /// the same as the API's; `None` uses the installation's stored key, as
    /// the API does ([`crate::recordings::EndRecorder`]).
    pub recording_key: Option<String>,
}

impl fmt::Debug for WorkerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerConfig")
            .field("worker_id", &self.worker_id)
            .field("lease_ttl", &self.lease_ttl)
            .field("reconcile_interval", &self.reconcile_interval)
            .field("sweep_interval", &self.sweep_interval)
            .field("outbox_min_idle", &self.outbox_min_idle)
            .field("delivery", &self.delivery)
            .field("schedule", &self.schedule)
            .field("per_endpoint", &self.per_endpoint)
            .field("config_grace", &self.config_grace)
            .field("retention", &self.retention)
            .field(
                "recording_key",
                &self.recording_key.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            worker_id: format!("wrk_{}", ulid::Ulid::new()),
            lease_ttl: Duration::from_secs(5),
            reconcile_interval: Duration::from_secs(1),
            sweep_interval: Duration::from_secs(1),
            outbox_min_idle: Duration::from_secs(15),
            outbox_batch: 500,
            expire_batch: 1000,
            claim_concurrency: 256,
            delivery: DeliveryConfig::default(),
            schedule: Schedule::default(),
            per_endpoint: matchplane_webhook::dispatcher::DEFAULT_PER_ENDPOINT,
            max_in_flight: 256,
            delivery_lock: Duration::from_secs(30),
            delivery_poll: Duration::from_millis(250),
            config_grace: DEFAULT_CONFIG_GRACE,
            retention: RetentionConfig::default(),
            on_cycle: None,
            recording_key: None,
        }
    }
}
