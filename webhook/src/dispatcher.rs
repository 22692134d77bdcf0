//! Runs a delivery through its attempts (docs/webhooks.md), one endpoint at a time
//! never holding up another.
//!
//! Each attempt first takes a permit of its endpoint's semaphore
//! ([`EndpointLimits`], keyed by `host:port`), so a studio whose endpoint
//! hangs ties up at most `per_endpoint` attempts, each for at most the
//! attempt timeout, while deliveries to every other studio go on. The
//! permit is held for the attempt only, never across the wait before a retry.
//! (A studio with many endpoints is capped as a whole by the worker's
//! delivery loop: at most a share of its in-flight attempts per project.)
//!
//! The dispatcher is the shell around the pure parts: it reads the clock for
//! each attempt's timestamp and says what follows an attempt; the worker
//! records each one and keeps the schedule in the database.

use crate::deliver::{Attempt, Deliverer, Delivery};
use crate::schedule::{NextAction, Outcome, Schedule};
use chrono::{DateTime, Utc};
use rand::Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Attempts in flight to one endpoint, by default.
pub const DEFAULT_PER_ENDPOINT: usize = 4;

/// Endpoints with their own semaphore, by default; beyond that, idle ones are
/// forgotten, and if none is idle the newcomers share one overflow semaphore.
pub const DEFAULT_MAX_ENDPOINTS: usize = 10_000;

/// Per-endpoint concurrency caps, in a map of bounded size.
#[derive(Debug)]
pub struct EndpointLimits {
    per_endpoint: usize,
    max_endpoints: usize,
    semaphores: Mutex<HashMap<String, Arc<Semaphore>>>,
    overflow: Arc<Semaphore>,
}

impl Default for EndpointLimits {
    fn default() -> Self {
        Self::new(DEFAULT_PER_ENDPOINT, DEFAULT_MAX_ENDPOINTS)
    }
}

impl EndpointLimits {
    /// At most `per_endpoint` (at least 1) attempts in flight per endpoint,
    /// tracking at most `max_endpoints` (at least 1) endpoints.
    pub fn new(per_endpoint: usize, max_endpoints: usize) -> Self {
        let per_endpoint = per_endpoint.max(1);
        Self {
            per_endpoint,
            max_endpoints: max_endpoints.max(1),
            semaphores: Mutex::new(HashMap::new()),
            overflow: Arc::new(Semaphore::new(per_endpoint)),
        }
    }

    /// Waits for a slot of endpoint `key`; the slot is free again when the
    /// permit is dropped. `None` only if the semaphore was closed, which this
    /// type never does.
    pub async fn acquire(&self, key: &str) -> Option<OwnedSemaphorePermit> {
        self.semaphore(key).acquire_owned().await.ok()
    }

    /// A slot of endpoint `key` if one is free now, without waiting: a
    /// caller that must not hold shared capacity while an endpoint is busy
    /// takes this first and skips the endpoint when it is `None`.
    pub fn try_acquire(&self, key: &str) -> Option<OwnedSemaphorePermit> {
        self.semaphore(key).try_acquire_owned().ok()
    }

    /// Attempts in flight allowed to one endpoint.
    pub fn per_endpoint(&self) -> usize {
        self.per_endpoint
    }

    /// Whether endpoint `key` has an attempt in flight now (a slot taken
    /// and not yet given back); `false` for one not tracked.
    pub fn in_flight(&self, key: &str) -> bool {
        self.lock()
            .get(key)
            .is_some_and(|semaphore| semaphore.available_permits() < self.per_endpoint)
    }

    /// Endpoints currently tracked.
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Semaphore>>> {
        self.semaphores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn semaphore(&self, key: &str) -> Arc<Semaphore> {
        let mut map = self.lock();
        if let Some(found) = map.get(key) {
            return Arc::clone(found);
        }
        if map.len() >= self.max_endpoints {
            // Only the map holds an idle endpoint's semaphore.
            map.retain(|_, semaphore| Arc::strong_count(semaphore) > 1);
        }
        if map.len() >= self.max_endpoints {
            return Arc::clone(&self.overflow);
        }
        let semaphore = Arc::new(Semaphore::new(self.per_endpoint));
        map.insert(key.to_owned(), Arc::clone(&semaphore));
        semaphore
    }
}

/// The dispatcher's source of "now", read once per attempt for its
/// `webhook-timestamp` (`Utc::now` in production; a virtual clock in tests).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// Runs deliveries: one per worker, shared by every delivery task.
pub struct Dispatcher {
    deliverer: Deliverer,
    schedule: Schedule,
    limits: EndpointLimits,
    clock: Clock,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("deliverer", &self.deliverer)
            .field("schedule", &self.schedule)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher sending with `deliverer`, retrying on `schedule`, capped by `limits`.
    pub fn new(deliverer: Deliverer, schedule: Schedule, limits: EndpointLimits) -> Self {
        Self {
            deliverer,
            schedule,
            limits,
            clock: Arc::new(Utc::now),
        }
    }

    /// The same dispatcher reading `clock` instead of the system clock.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The per-endpoint caps: the worker takes an endpoint's permit before
    /// any shared capacity, so a slow endpoint never holds another's slot.
    pub fn limits(&self) -> &EndpointLimits {
        &self.limits
    }

    /// The longest one attempt lasts ([`Deliverer::timeout`]).
    pub fn attempt_timeout(&self) -> std::time::Duration {
        self.deliverer.timeout()
    }

    /// Makes attempt number `number` (1 for the first) of `delivery`, and
    /// says what follows; never sleeps. This is the tick of the worker's
    /// loop over the store's due deliveries. The caller already holds a
    /// slot of the delivery's endpoint (from [`EndpointLimits::try_acquire`]
    /// or [`EndpointLimits::acquire`]); it is held for the attempt, never
    /// waited for here.
    pub async fn step_holding<G>(
        &self,
        _slot: Option<&OwnedSemaphorePermit>,
        delivery: &Delivery,
        number: u32,
        rng: &mut G,
    ) -> (Attempt, NextAction)
    where
        G: Rng + Send + ?Sized,
    {
        let key = delivery.endpoint_key();
        let attempt = self.deliverer.attempt(delivery, (self.clock)()).await;
        let next = self.schedule.next(number, attempt.outcome, rng);
        log_attempt(delivery, &key, number, &attempt, next);
        (attempt, next)
    }
}

/// What a failed attempt came to, for logs and the mode's webhook health:
/// the HTTP status, or the error (which names no URL); `None` if delivered.
pub fn failure_text(attempt: &Attempt) -> Option<String> {
    if attempt.outcome == Outcome::Delivered {
        return None;
    }
    Some(match (&attempt.error, attempt.status) {
        (Some(error), _) => error.to_string(),
        (None, Some(status)) => format!("HTTP {status}"),
        (None, None) => "no answer".to_owned(),
    })
}

/// Logs an attempt: a delivered one at INFO, a failed one at WARN, and the
/// end of a delivery that failed for good at ERROR. The endpoint is
/// `host:port` only (a URL's path or query may carry a token), and neither
/// the body nor a secret is logged.
fn log_attempt(
    delivery: &Delivery,
    endpoint: &str,
    number: u32,
    attempt: &Attempt,
    next: NextAction,
) {
    let webhook_id = delivery.message().id.as_str();
    let Some(failure) = failure_text(attempt) else {
        tracing::info!(
            webhook_id,
            endpoint,
            attempt = number,
            status = attempt.status,
            latency_ms = attempt.latency_ms,
            "webhook delivered"
        );
        return;
    };
    match next {
        NextAction::Retry { after } => tracing::warn!(
            webhook_id,
            endpoint,
            attempt = number,
            status = attempt.status,
            latency_ms = attempt.latency_ms,
            error = %failure,
            retry_in_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
            "webhook attempt failed; retrying"
        ),
        NextAction::Stop(end) => tracing::error!(
            webhook_id,
            endpoint,
            attempt = number,
            status = attempt.status,
            error = %failure,
            end = ?end,
            "webhook delivery failed for good; no more attempts"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_map_stays_bounded_and_forgets_idle_endpoints() {
        let limits = EndpointLimits::new(1, 2);
        let held_a = limits.acquire("a:443").await;
        let held_b = limits.acquire("b:443").await;
        // Full, nothing idle: a third endpoint shares the overflow semaphore.
        let overflow = limits.acquire("c:443").await;
        assert_eq!(limits.tracked(), 2);
        drop((held_a, overflow));
        // "a" is idle now and makes room for "d".
        let _d = limits.acquire("d:443").await;
        assert_eq!(limits.tracked(), 2);
        drop(held_b);
    }

    #[tokio::test]
    async fn an_endpoint_is_capped() {
        let limits = EndpointLimits::new(2, 10);
        let _one = limits.acquire("slow:443").await;
        let _two = limits.acquire("slow:443").await;
        let third = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            limits.acquire("slow:443"),
        )
        .await;
        assert!(third.is_err(), "a third attempt to the same endpoint waits");
        let other = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            limits.acquire("fast:443"),
        )
        .await;
        assert!(other.is_ok(), "another endpoint does not wait");
    }
}
