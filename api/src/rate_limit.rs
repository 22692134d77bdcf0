//! Per-project request rate limit (docs/api-keys.md): a token bucket refilled at the
//! project's tier `requestsPerSecond`, burst of one second's worth.
//!
//! Buckets live in this process; docs/deployment.md moves them to Redis once the API
//! runs with Redis, so that replicas share one bucket per project.
//!
//! The buckets are a bounded cache ([`MAX_BUCKETS`], dropped after
//! [`BUCKET_IDLE`] unused): a project that has not called for that long
//! would find its bucket full again anyway, so dropping it changes no
//! answer, and the map cannot grow with every project ever seen.

use crate::problem::ApiError;
use foldhash::fast::RandomState;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use moka::sync::Cache;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Most projects with a bucket in one process.
pub const MAX_BUCKETS: u64 = 100_000;
/// A bucket unused this long is dropped (it refills within a second).
pub const BUCKET_IDLE: Duration = Duration::from_secs(600);

/// One bucket per project, re-made when the project's rate changes.
pub struct ProjectLimiter {
    /// foldhash rather than the default SipHash: every key request looks
    /// its project up here.
    buckets: Cache<String, (u32, Arc<DefaultDirectRateLimiter>), RandomState>,
    /// Counts every refusal (`crate::observe::RATE_LIMITED`); a no-op
    /// counter by default.
    refused: metrics::Counter,
}

impl Default for ProjectLimiter {
    /// Buckets that count nothing.
    fn default() -> Self {
        Self::counting(metrics::Counter::noop())
    }
}

impl ProjectLimiter {
    /// Buckets that count each refusal in `refused`.
    pub fn counting(refused: metrics::Counter) -> Self {
        Self {
            buckets: Cache::builder()
                .max_capacity(MAX_BUCKETS)
                .time_to_idle(BUCKET_IDLE)
                .build_with_hasher(RandomState::default()),
            refused,
        }
    }

    /// Takes one token from `project_id`'s bucket at `requests_per_second`.
    ///
    /// # Errors
    /// The whole seconds to wait before a token is available (at least 1).
    pub fn check(&self, project_id: &str, requests_per_second: u32) -> Result<(), u64> {
        let rate = NonZeroU32::new(requests_per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let fresh = || Arc::new(RateLimiter::direct(Quota::per_second(rate)));
        // By &str: no allocation unless the bucket is new; two first
        // requests at once share the one bucket inserted.
        let (current, limiter) = self
            .buckets
            .entry_by_ref(project_id)
            .or_insert_with(|| (rate.get(), fresh()))
            .into_value();
        let limiter = if current == rate.get() {
            limiter
        } else {
            let limiter = fresh();
            self.buckets
                .insert(project_id.to_owned(), (rate.get(), Arc::clone(&limiter)));
            limiter
        };
        limiter.check().map_err(|not_until| {
            self.refused.increment(1);
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}

impl std::fmt::Debug for ProjectLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectLimiter").finish_non_exhaustive()
    }
}

/// Previews a project may start per second (and in a burst).
pub const PREVIEWS_PER_SECOND: u32 = 2;
/// Previews computing at once in one API process.
pub const PREVIEW_CONCURRENCY: usize = 2;

/// The config previews' and replays' own limits (`crate::routes::preview`):
/// per-project buckets and a process-wide gate.
#[derive(Debug)]
pub struct PreviewGate {
    buckets: ProjectLimiter,
    running: tokio::sync::Semaphore,
}

impl Default for PreviewGate {
    fn default() -> Self {
        Self {
            buckets: ProjectLimiter::default(),
            running: tokio::sync::Semaphore::new(PREVIEW_CONCURRENCY),
        }
    }
}

impl PreviewGate {
    /// The gate, counting each refusal of its buckets in `refused`.
    pub fn counting(refused: metrics::Counter) -> Self {
        Self {
            buckets: ProjectLimiter::counting(refused),
            ..Self::default()
        }
    }

    /// Takes one of `project_id`'s previews (or replays) of this second.
    ///
    /// # Errors
    /// `429 RATE_LIMITED` with `Retry-After` past [`PREVIEWS_PER_SECOND`].
    pub fn admit(&self, project_id: &str) -> Result<(), crate::problem::ApiError> {
        self.buckets
            .check(project_id, PREVIEWS_PER_SECOND)
            .map_err(|retry_after| {
                crate::problem::ApiError::rate_limited_for(
                    format!(
                        "the project's previews and replays are limited to \
                         {PREVIEWS_PER_SECOND} a second; retry later"
                    ),
                    retry_after,
                )
            })
    }

    /// Waits for one of the [`PREVIEW_CONCURRENCY`] computing slots.
    ///
    /// # Errors
    /// `500` if the gate was closed (never).
    pub async fn running(
        &self,
    ) -> Result<tokio::sync::SemaphorePermit<'_>, crate::problem::ApiError> {
        self.running
            .acquire()
            .await
            .map_err(|e| crate::problem::ApiError::internal(&e))
    }
}

/// Simulations and replays a project may have running at once.
pub const SIMULATIONS_PER_PROJECT: usize = 2;

/// `Retry-After` of a simulation refused for too many running (seconds).
pub const SIMULATION_RETRY_AFTER_SECONDS: u64 = 1;

/// Simulations and replays running at once in one API process: one per
/// CPU the process may use, and at least [`SIMULATIONS_PER_PROJECT`].
pub fn simulation_concurrency() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .max(SIMULATIONS_PER_PROJECT)
}

/// The limit on simulations (`POST …/simulate`) and replays (`POST
/// …/replay`) running at once: a few per project, and a process-wide cap,
/// so that one project cannot fill the CPUs with runs of up to 10 s.
/// Over either, `429 RATE_LIMITED` with `Retry-After`, at once.
#[derive(Debug)]
pub struct SimulationGate {
    per_project: usize,
    projects: Cache<String, Arc<Semaphore>>,
    process: usize,
    running: Arc<Semaphore>,
    /// Counts each refusal, when set.
    refused: Option<metrics::Counter>,
}

/// A running simulation's places (its project's and the process's): held
/// until the run ends, released when dropped.
#[derive(Debug)]
pub struct SimulationPermit {
    _project: OwnedSemaphorePermit,
    _process: OwnedSemaphorePermit,
}

impl Default for SimulationGate {
    fn default() -> Self {
        Self::new(SIMULATIONS_PER_PROJECT, simulation_concurrency())
    }
}

impl SimulationGate {
    /// At most `per_project` runs of a project and `process` in all at
    /// once (each at least 1).
    pub fn new(per_project: usize, process: usize) -> Self {
        let process = process.max(1);
        Self {
            per_project: per_project.max(1),
            // A project's semaphore is used within seconds of being made
            // and kept while idle for far longer than a run.
            projects: Cache::builder()
                .max_capacity(MAX_BUCKETS)
                .time_to_idle(BUCKET_IDLE)
                .build(),
            process,
            running: Arc::new(Semaphore::new(process)),
            refused: None,
        }
    }

    /// The gate, counting each refusal in `refused`.
    pub fn counting(mut self, refused: metrics::Counter) -> Self {
        self.refused = Some(refused);
        self
    }

    /// A refusal of `detail`, counted.
    fn refuse(&self, detail: String) -> ApiError {
        if let Some(counter) = &self.refused {
            counter.increment(1);
        }
        ApiError::rate_limited_for(detail, SIMULATION_RETRY_AFTER_SECONDS)
    }

    /// A place for one of `project_id`'s runs, if its project and the
    /// process have one free.
    ///
    /// # Errors
    /// `429 RATE_LIMITED` with `Retry-After` when the project has its
    /// [`SIMULATIONS_PER_PROJECT`] running, or the process its cap.
    pub fn try_start(&self, project_id: &str) -> Result<SimulationPermit, ApiError> {
        let project = self
            .projects
            .get_with_by_ref(project_id, || Arc::new(Semaphore::new(self.per_project)))
            .try_acquire_owned()
            .map_err(|_| {
                self.refuse(format!(
                    "simulations and replays are limited to {} at a time per project; \
                     retry when one has finished",
                    self.per_project
                ))
            })?;
        let process = Arc::clone(&self.running).try_acquire_owned().map_err(|_| {
            self.refuse(format!(
                "the server is running its most simulations and replays at once ({}); \
                 retry shortly",
                self.process
            ))
        })?;
        Ok(SimulationPermit {
            _project: project,
            _process: process,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project past its runs at once is refused (`429` with
    /// `Retry-After`, the limit said) while another project runs; a place
    /// comes back when a run ends; the process-wide cap refuses every
    /// project.
    #[test]
    fn simulations_are_limited_per_project_and_per_process() {
        let gate = SimulationGate::new(2, 3);
        let a1 = gate.try_start("prj_a").unwrap();
        let _a2 = gate.try_start("prj_a").unwrap();
        let refused = gate.try_start("prj_a").unwrap_err();
        assert_eq!(refused.status(), axum::http::StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.code(), "RATE_LIMITED");
        let problem = refused.problem();
        assert!(
            problem
                .detail
                .contains("limited to 2 at a time per project"),
            "{}",
            problem.detail
        );
        let response = axum::response::IntoResponse::into_response(refused);
        assert_eq!(response.headers()[axum::http::header::RETRY_AFTER], "1");

        let _b1 = gate.try_start("prj_b").unwrap();
        let full = gate.try_start("prj_c").unwrap_err();
        assert_eq!(full.code(), "RATE_LIMITED");
        assert!(
            full.problem().detail.contains("at once (3)"),
            "{}",
            full.problem().detail
        );
        // A place freed is taken by the next run, of any project.
        drop(a1);
        let _c1 = gate.try_start("prj_c").unwrap();
        assert!(gate.try_start("prj_a").is_err());
    }

    #[test]
    fn the_process_runs_one_simulation_per_cpu_and_never_fewer_than_a_project() {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        assert_eq!(simulation_concurrency(), cpus.max(SIMULATIONS_PER_PROJECT));
    }

    /// The buckets stay bounded however many projects call.
    #[test]
    fn buckets_are_bounded() {
        let limiter = ProjectLimiter::default();
        for p in 0..MAX_BUCKETS + 5_000 {
            assert!(limiter.check(&format!("prj_{p}"), 10).is_ok());
        }
        limiter.buckets.run_pending_tasks();
        assert!(limiter.buckets.entry_count() <= MAX_BUCKETS);
    }

    /// A project's bucket holds one second's worth, then refuses with the
    /// seconds to wait; a new rate makes a new bucket.
    #[test]
    fn a_bucket_refuses_past_its_burst_and_follows_a_new_rate() {
        let limiter = ProjectLimiter::default();
        for _ in 0..3 {
            assert!(limiter.check("prj_a", 3).is_ok());
        }
        assert_eq!(limiter.check("prj_a", 3), Err(1));
        assert!(limiter.check("prj_a", 4).is_ok());
    }
}
