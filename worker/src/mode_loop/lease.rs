//! The mode's lease as its loop holds it: the cycle's renewal that also
//! counts what the mode holds, and the renewals while work or a wait runs.

use super::Shared;
use matchplane_store::pool::{ModeActivity, ModeKey};
use std::future::Future;
use std::time::Duration;

/// The lease as this loop holds it: its token and until when it runs,
/// counted in the worker's `matchplane_worker_modes_held` while it surely
/// runs (docs/operations.md): from its taking until a renewal fails after
/// the lease's last sure moment, and again from the next renewal; no
/// longer once dropped.
pub(super) struct HeldLease<'s> {
    shared: &'s Shared,
    pub(super) token: u64,
    /// Until when it runs as far as this loop plans: the renewals are
    /// timed from it (a failed renewal moves it to time the retry).
    pub(super) valid_until: tokio::time::Instant,
    /// Until when it surely runs: counted from before the last renewal
    /// that succeeded was sent.
    surely_until: tokio::time::Instant,
    /// Whether `modes_held` counts it now.
    counted: bool,
}

impl<'s> HeldLease<'s> {
    /// The lease `token`, just taken for `ttl`; counted as held.
    pub(super) fn taken(shared: &'s Shared, token: u64, ttl: Duration) -> Self {
        let until = tokio::time::Instant::now() + ttl;
        shared.count_held(true);
        Self {
            shared,
            token,
            valid_until: until,
            surely_until: until,
            counted: true,
        }
    }

    /// When to renew it outside a cycle: a third of a lease time before it
    /// ends (after the next cycle's renewal, for a cycle on time).
    pub(super) fn renew_at(&self, ttl: Duration) -> tokio::time::Instant {
        self.valid_until - ttl / 3
    }

    /// A renewal sent at `sent` for `hold` succeeded.
    fn renewed(&mut self, sent: tokio::time::Instant, hold: Duration) {
        self.valid_until = sent + hold;
        self.surely_until = sent + hold;
        if !self.counted {
            self.shared.count_held(true);
            self.counted = true;
        }
    }

    /// A renewal sent at `sent` got no answer: past the lease's last sure
    /// moment the worker no longer counts it as held (a Redis outage
    /// longer than the lease lets another worker take the mode).
    fn unanswered(&mut self, sent: tokio::time::Instant) {
        if self.counted && sent >= self.surely_until {
            self.shared.count_held(false);
            self.counted = false;
        }
    }
}

impl Drop for HeldLease<'_> {
    fn drop(&mut self) {
        if self.counted {
            self.shared.count_held(false);
        }
    }
}

/// How long a cycle's renewal holds the lease: the cycle's pause plus half
/// a lease time, within one and one and a half lease times. For a cycle no
/// longer than the lease time the next cycle's renewal comes well before
/// the hold ends, so an idle mode needs no other; a killed worker's modes
/// are free at most 1.5 lease times after its last renewal.
pub(super) fn hold_for(ttl: Duration, pause: Duration) -> Duration {
    (pause + ttl / 2).clamp(ttl, ttl + ttl / 2)
}

/// What the cycle's first call found.
pub(super) enum Probe {
    /// Still held; what the mode holds.
    Renewed(Option<ModeActivity>),
    /// The lease is gone.
    Lost,
    /// The store did not answer: counted as held (the fencing token
    /// protects the claims, and the next renewal decides).
    Failed,
}

/// Renews the lease for `hold` and counts what the mode holds.
pub(super) async fn probe(
    shared: &Shared,
    key: &ModeKey,
    lease: &mut HeldLease<'_>,
    hold: Duration,
) -> Probe {
    let sent = tokio::time::Instant::now();
    match shared
        .pool
        .renew_lease_and_probe(key, lease.token, hold)
        .await
    {
        Ok(Some(activity)) => {
            lease.renewed(sent, hold);
            Probe::Renewed(Some(activity))
        }
        Ok(None) => Probe::Lost,
        Err(err) => {
            tracing::warn!(game_mode = %key.mode, error = %err, "lease renewal failed");
            lease.unanswered(sent);
            Probe::Failed
        }
    }
}

/// Drives `work` to its end while renewing the lease a third of a lease
/// time before it would end; the flag says whether a renewal found the
/// lease gone.
pub(super) async fn renewing<F: Future>(
    shared: &Shared,
    key: &ModeKey,
    lease: &mut HeldLease<'_>,
    work: F,
) -> (F::Output, bool) {
    let ttl = shared.config.lease_ttl;
    let mut lost = false;
    tokio::pin!(work);
    loop {
        tokio::select! {
            out = &mut work => return (out, lost),
            () = tokio::time::sleep_until(lease.renew_at(ttl)), if !lost => {
                if !renew(shared, key, lease).await {
                    lost = true;
                }
            }
        }
    }
}

/// Renews the lease for a lease time; `false` if it is gone (an error
/// counts as still held: the fencing token protects the claims, and the
/// next renewal decides; the next try is a little later).
pub(super) async fn renew(shared: &Shared, key: &ModeKey, lease: &mut HeldLease<'_>) -> bool {
    let ttl = shared.config.lease_ttl;
    let sent = tokio::time::Instant::now();
    match shared.pool.renew_lease(key, lease.token, ttl).await {
        Ok(true) => {
            lease.renewed(sent, ttl);
            true
        }
        Ok(false) => false,
        Err(err) => {
            tracing::warn!(game_mode = %key.mode, error = %err, "lease renewal failed");
            lease.unanswered(sent);
            // Retry in a tenth of a lease time rather than at once.
            lease.valid_until = sent + ttl / 3 + ttl / 10;
            true
        }
    }
}
