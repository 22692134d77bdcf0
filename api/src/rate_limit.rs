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

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use moka::sync::Cache;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// Most projects with a bucket in one process.
pub const MAX_BUCKETS: u64 = 100_000;
/// A bucket unused this long is dropped (it refills within a second).
pub const BUCKET_IDLE: Duration = Duration::from_secs(600);

/// One bucket per project, re-made when the project's rate changes.
pub struct ProjectLimiter {
    buckets: Cache<String, (u32, Arc<DefaultDirectRateLimiter>)>,
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
                .build(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
