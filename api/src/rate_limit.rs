//! Per-project request rate limit (docs/api-keys.md): a token bucket refilled at the
//! project's tier `requestsPerSecond`, burst of one second's worth.
//!
//! Buckets live in this process; docs/deployment.md moves them to Redis once the API
//! runs with Redis, so that replicas share one bucket per project.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

/// One bucket per project, re-made when the project's rate changes.
pub struct ProjectLimiter {
    buckets: Mutex<HashMap<String, (u32, Arc<DefaultDirectRateLimiter>)>>,
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
            buckets: Mutex::default(),
            refused,
        }
    }

    /// Takes one token from `project_id`'s bucket at `requests_per_second`.
    ///
    /// # Errors
    /// The whole seconds to wait before a token is available (at least 1).
    pub fn check(&self, project_id: &str, requests_per_second: u32) -> Result<(), u64> {
        let rate = NonZeroU32::new(requests_per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let limiter = {
            let mut buckets = match self.buckets.lock() {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
            // A lookup by &str first: no allocation on the hot path.
            match buckets.get(project_id) {
                Some((current, limiter)) if *current == rate.get() => Arc::clone(limiter),
                _ => {
                    let limiter = Arc::new(RateLimiter::direct(Quota::per_second(rate)));
                    buckets.insert(project_id.to_owned(), (rate.get(), Arc::clone(&limiter)));
                    limiter
                }
            }
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
            .map_err(crate::problem::ApiError::rate_limited)
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
