//! A claimed delivery's lock as its worker knows it (docs/operations.md,
//! "Webhook delivery: one studio never holds up another"): how long the
//! lock still has, by the worker's monotonic clock, from the moment each
//! write that set or extended it was sent; its renewal while the attempt
//! runs; and the check before an attempt is sent that the lock outlasts it.
//!
//! Other workers take a delivery once its `locked_until` has passed, so an
//! attempt sent with less time left than its timeout could run next to
//! another worker's attempt of the same delivery. Before sending, the
//! worker needs [`DeliveryWorker::needed`] left (the attempt's timeout and
//! [`LOCK_MARGIN`]); with less, it extends the lock once by a
//! compare-and-set on its claim token, and if that does not give it enough
//! either, the attempt is not sent.

use super::DeliveryWorker;
use crate::db_wait::{within, DELIVERY_LIMIT};
use chrono::{DateTime, Utc};
use matchplane_store::entities::webhook_delivery;
use matchplane_store::repos::deliveries;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What an attempt needs of its lock besides its timeout: room for the
/// clocks of the workers' hosts to differ (each takes a delivery once its
/// `locked_until` has passed by its own clock) and for the moments between
/// the check and the request going out.
pub const LOCK_MARGIN: Duration = Duration::from_secs(1);

/// A moment on both clocks: the wall clock a lock's `locked_until` is
/// written in, and the monotonic clock its time left is measured by.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stamp {
    wall: DateTime<Utc>,
    mono: Instant,
}

impl Stamp {
    /// Now, read just before a write that sets the lock is sent.
    pub(super) fn now() -> Self {
        Self {
            wall: Utc::now(),
            mono: Instant::now(),
        }
    }

    /// The wall-clock time this stamp was taken at.
    pub(super) fn wall(&self) -> DateTime<Utc> {
        self.wall
    }

    /// The monotonic instant a lock until `until` (wall clock), set by a
    /// write sent at this stamp, runs out at; this stamp itself if `until`
    /// is before it.
    fn monotonic(&self, until: DateTime<Utc>) -> Instant {
        let ahead = (until - self.wall).to_std().unwrap_or(Duration::ZERO);
        self.mono + ahead
    }
}

/// The lock one claim holds on one delivery, shared by its attempt and its
/// renewal: when it runs out at the earliest, by the monotonic clock.
#[derive(Debug)]
pub(super) struct HeldLock {
    /// `None` once another claim is known to hold the delivery.
    runs_out: Mutex<Option<Instant>>,
}

impl HeldLock {
    /// The lock a claim took with the write sent at `stamp`, until `until`
    /// (the row's `locked_until` as the claim set it).
    pub(super) fn taken(stamp: Stamp, until: Option<DateTime<Utc>>) -> Arc<Self> {
        let runs_out = until.map_or(stamp.mono, |until| stamp.monotonic(until));
        Arc::new(Self {
            runs_out: Mutex::new(Some(runs_out)),
        })
    }

    /// A write of the claim sent at `stamp` extended the lock to `until`
    /// and found the claim still holding the delivery. The store never
    /// moves a claim's lock back ([`deliveries::renew`]), so the later of
    /// the two ends holds.
    pub(super) fn extended(&self, stamp: Stamp, until: DateTime<Utc>) {
        let mut runs_out = self.lock();
        if let Some(at) = runs_out.as_mut() {
            *at = (*at).max(stamp.monotonic(until));
        }
    }

    /// Another claim holds the delivery now.
    pub(super) fn lost(&self) {
        *self.lock() = None;
    }

    /// How long the lock still has: zero once it ran out or was lost.
    pub(super) fn left(&self) -> Duration {
        self.lock().map_or(Duration::ZERO, |at| {
            at.saturating_duration_since(Instant::now())
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.runs_out.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl DeliveryWorker {
    /// What an attempt needs left of its lock to be sent: its timeout and
    /// [`LOCK_MARGIN`].
    pub(super) fn needed(&self) -> Duration {
        self.dispatcher.attempt_timeout() + LOCK_MARGIN
    }

    /// Whether `row`'s lock (held by its claim's `token`) lasts the attempt
    /// about to be sent: [`DeliveryWorker::needed`] left, or enough after
    /// one renewal, a compare-and-set proving the claim still holds it. A
    /// renewal that fails or is slow leaves the answer `false`.
    pub(super) async fn lock_lasts(
        &self,
        row: &webhook_delivery::Model,
        token: &str,
        lock: &HeldLock,
    ) -> bool {
        let needed = self.needed();
        if lock.left() >= needed {
            return true;
        }
        let stamp = Stamp::now();
        let until = stamp.wall() + self.lock_span();
        let renew = deliveries::renew(&self.db, &row.id, token, until);
        match within(DELIVERY_LIMIT, "renewing a webhook lock", renew).await {
            Ok(true) => lock.extended(stamp, until),
            Ok(false) => lock.lost(),
            Err(err) => {
                tracing::warn!(delivery_id = %row.id, error = %err, "webhook lock not renewed");
            }
        }
        lock.left() >= needed
    }

    /// Renews `row`'s lock every third of its span until the guard is
    /// dropped, so a delivery stays with its worker while it is attempted;
    /// each renewal that holds is noted in `lock`.
    pub(super) fn keep_locked(
        &self,
        row: &webhook_delivery::Model,
        lock: &Arc<HeldLock>,
    ) -> RenewGuard {
        let (db, id, lock) = (self.db.clone(), row.id.clone(), Arc::clone(lock));
        let token = row.lock_token.clone().unwrap_or_default();
        let every = (self.lock_for / 3).max(Duration::from_millis(50));
        let span = self.lock_span();
        RenewGuard(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let stamp = Stamp::now();
                let until = stamp.wall() + span;
                let renew = deliveries::renew(&db, &id, &token, until);
                match within(DELIVERY_LIMIT, "renewing a webhook lock", renew).await {
                    Ok(true) => lock.extended(stamp, until),
                    Ok(false) => {
                        lock.lost();
                        break;
                    }
                    Err(err) => {
                        tracing::warn!(delivery_id = %id, error = %err, "webhook lock not renewed");
                    }
                }
            }
        }))
    }
}

/// Stops a lock's renewal when dropped.
pub(super) struct RenewGuard(tokio::task::JoinHandle<()>);

impl Drop for RenewGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_measured_from_the_write_that_set_it() {
        let stamp = Stamp::now();
        let lock = HeldLock::taken(stamp, Some(stamp.wall() + chrono::Duration::seconds(30)));
        let left = lock.left();
        assert!(left <= Duration::from_secs(30) && left > Duration::from_secs(29));
        // An older write's end does not shorten it; a later one lengthens it.
        lock.extended(stamp, stamp.wall() + chrono::Duration::seconds(10));
        assert!(lock.left() > Duration::from_secs(29));
        lock.extended(stamp, stamp.wall() + chrono::Duration::seconds(40));
        assert!(lock.left() > Duration::from_secs(39));
        lock.lost();
        assert_eq!(lock.left(), Duration::ZERO);
        lock.extended(stamp, stamp.wall() + chrono::Duration::seconds(40));
        assert_eq!(lock.left(), Duration::ZERO, "a lost lock stays lost");
    }

    #[test]
    fn a_lock_set_in_the_past_has_nothing_left() {
        let stamp = Stamp::now();
        let lock = HeldLock::taken(stamp, Some(stamp.wall() - chrono::Duration::seconds(1)));
        assert_eq!(lock.left(), Duration::ZERO);
        assert_eq!(HeldLock::taken(stamp, None).left(), Duration::ZERO);
    }
}
