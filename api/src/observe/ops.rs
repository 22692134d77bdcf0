//! The API's live-ops metrics (docs/operations.md, 'Metrics'): requests
//! refused by a rate limit, open WebSocket searches, the dependencies'
//! health as the readiness check last saw it, how the searches this
//! process ended ended, the studio's match releases, and the process's
//! own figures. Every series of a closed label set is registered at 0 when
//! the state is built, so a dashboard reads 0 from the start rather than
//! absent.

use crate::routes::match_lifecycle::RELEASES;
use matchplane_store::pool::EndOutcome;
use matchplane_store::repos::match_status::RELEASED;
use matchplane_store::search_ends::{
    failure_label, CANCELLED, EXPIRED, FAILED, FAILURE_CODES, OUTCOMES, SEARCHES_ENDED,
    SEARCHES_FAILED,
};
use metrics::{Counter, Gauge};
use metrics_exporter_prometheus::PrometheusRecorder;
use std::future::Future;

/// Counter: requests answered `429 RATE_LIMITED` by a rate limit, by
/// `limit` (`requests`: the project's requests per second; `preview`: the
/// config previews' own; `simulations`: simulations and replays running
/// at once).
pub const RATE_LIMITED: &str = "matchplane_rate_limited_total";
/// Gauge: WebSocket searches open on this process.
pub const WEBSOCKETS_OPEN: &str = "matchplane_websocket_connections_open";
/// Gauge: 1 when the `dependency` (`database`, `redis`) answered this
/// process's last readiness check (`/readyz`, or a scrape of `/metrics`),
/// else 0.
pub const DEPENDENCY_UP: &str = "matchplane_dependency_up";

/// The live-ops handles of one router's recorder, registered once.
pub struct LiveOps {
    /// [`RATE_LIMITED`] with `limit="requests"`.
    pub requests_limited: Counter,
    /// [`RATE_LIMITED`] with `limit="preview"`.
    pub previews_limited: Counter,
    /// [`RATE_LIMITED`] with `limit="simulations"`.
    pub simulations_limited: Counter,
    websockets: Gauge,
    database_up: Gauge,
    redis_up: Gauge,
    process: metrics_process::Collector,
}

impl std::fmt::Debug for LiveOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveOps").finish_non_exhaustive()
    }
}

impl LiveOps {
    /// Describes the families and registers every series at 0 in
    /// `recorder`.
    pub fn register(recorder: &PrometheusRecorder) -> Self {
        metrics::with_local_recorder(recorder, || {
            metrics::describe_counter!(
                RATE_LIMITED,
                metrics::Unit::Count,
                "Requests answered 429 RATE_LIMITED by a rate limit, by limit (requests: the project's requests per second; preview: the config previews'; simulations: simulations and replays running at once)"
            );
            metrics::describe_gauge!(
                WEBSOCKETS_OPEN,
                metrics::Unit::Count,
                "WebSocket searches open on this process"
            );
            metrics::describe_gauge!(
                DEPENDENCY_UP,
                "1 when the dependency (database, redis) answered this process's last readiness check, else 0"
            );
            metrics::describe_counter!(
                RELEASES,
                metrics::Unit::Count,
                "Made matches released, by status (released: by the studio, on this instance; the worker counts unassigned)"
            );
            metrics::counter!(RELEASES, "status" => RELEASED).increment(0);
            let process = metrics_process::Collector::default();
            process.describe();
            Self {
                requests_limited: metrics::counter!(RATE_LIMITED, "limit" => "requests"),
                previews_limited: metrics::counter!(RATE_LIMITED, "limit" => "preview"),
                simulations_limited: metrics::counter!(RATE_LIMITED, "limit" => "simulations"),
                websockets: metrics::gauge!(WEBSOCKETS_OPEN),
                database_up: metrics::gauge!(DEPENDENCY_UP, "dependency" => "database"),
                redis_up: metrics::gauge!(DEPENDENCY_UP, "dependency" => "redis"),
                process,
            }
        })
    }

    /// Sets the dependencies' health from a readiness check.
    pub fn dependencies(&self, database: bool, redis: bool) {
        self.database_up.set(f64::from(u8::from(database)));
        self.redis_up.set(f64::from(u8::from(redis)));
    }

    /// Runs `socket` (one WebSocket search) counted in [`WEBSOCKETS_OPEN`]
    /// until it ends, however it ends (a dropped future counts off too).
    pub fn while_open<F: Future>(&self, socket: F) -> impl Future<Output = F::Output> {
        let open = OpenSocket::new(self.websockets.clone());
        async move {
            let _open = open;
            socket.await
        }
    }

    /// Reads the process's figures (CPU, memory, threads, open files) into
    /// `recorder`, before a scrape renders it.
    pub fn collect_process(&self, recorder: &PrometheusRecorder) {
        metrics::with_local_recorder(recorder, || self.process.collect());
    }
}

/// One open socket in [`WEBSOCKETS_OPEN`]: counted on, and off when
/// dropped.
struct OpenSocket(Gauge);

impl OpenSocket {
    fn new(gauge: Gauge) -> Self {
        gauge.increment(1.0);
        Self(gauge)
    }
}

impl Drop for OpenSocket {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// The search-end counters ([`SEARCHES_ENDED`], [`SEARCHES_FAILED`]) of the
/// ends this process makes: cancels, and the expiries and failures it
/// decides at a request or a socket. Counts once attached to a recorder
/// (the router does, see `crate::router`).
#[derive(Debug, Default)]
pub struct SearchEnds {
    counters: std::sync::OnceLock<EndCounters>,
}

#[derive(Debug)]
struct EndCounters {
    cancelled: Counter,
    expired: Counter,
    failed: Counter,
    codes: Vec<(&'static str, Counter)>,
}

impl SearchEnds {
    /// Registers every outcome and failure code at 0 in `recorder` and
    /// counts there from now on; a second attach changes nothing.
    pub fn attach(&self, recorder: &PrometheusRecorder) {
        self.counters.get_or_init(|| {
            metrics::with_local_recorder(recorder, || {
                metrics::describe_counter!(
                    SEARCHES_ENDED,
                    metrics::Unit::Count,
                    "Searches ended, by outcome (matched, expired, cancelled, failed); each process counts the ends it makes"
                );
                metrics::describe_counter!(
                    SEARCHES_FAILED,
                    metrics::Unit::Count,
                    "Searches ended failed, by code (OTHER for a code outside the known set)"
                );
                let outcome = |o: &'static str| metrics::counter!(SEARCHES_ENDED, "outcome" => o);
                for o in OUTCOMES {
                    outcome(o).increment(0);
                }
                EndCounters {
                    cancelled: outcome(CANCELLED),
                    expired: outcome(EXPIRED),
                    failed: outcome(FAILED),
                    codes: FAILURE_CODES
                        .iter()
                        .map(|code| (*code, metrics::counter!(SEARCHES_FAILED, "code" => *code)))
                        .collect(),
                }
            })
        });
    }

    /// Counts one search this process ended with `outcome`.
    pub fn ended(&self, outcome: &EndOutcome) {
        self.ended_many(outcome, 1);
    }

    /// Counts `count` searches this process ended with `outcome` (a whole
    /// mode's, at its delete).
    pub fn ended_many(&self, outcome: &EndOutcome, count: usize) {
        let (Some(counters), count) = (self.counters.get(), count as u64) else {
            return;
        };
        match outcome {
            EndOutcome::Cancelled | EndOutcome::CancelledFor { .. } => {
                counters.cancelled.increment(count)
            }
            EndOutcome::Expired | EndOutcome::ExpiredFor { .. } => {
                counters.expired.increment(count)
            }
            EndOutcome::Failed { code, .. } => {
                counters.failed.increment(count);
                let label = failure_label(code);
                if let Some((_, counter)) = counters.codes.iter().find(|(c, _)| *c == label) {
                    counter.increment(count);
                }
            }
        }
    }
}
