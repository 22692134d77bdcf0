//! The mode's lease as its loop holds it: the cycle's renewal that also
//! counts what the mode holds, and the renewals while work or a wait runs.

use super::Shared;
use matchplane_store::pool::{ModeActivity, ModeKey};
use std::future::Future;
use std::time::Duration;

/// The lease as this loop holds it: its token and until when it surely
/// runs (counted from before each renewal was sent).
pub(super) struct HeldLease {
    pub(super) token: u64,
    pub(super) valid_until: tokio::time::Instant,
}

impl HeldLease {
    /// When to renew it outside a cycle: a third of a lease time before it
    /// ends (after the next cycle's renewal, for a cycle on time).
    pub(super) fn renew_at(&self, ttl: Duration) -> tokio::time::Instant {
        self.valid_until - ttl / 3
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
    lease: &mut HeldLease,
    hold: Duration,
) -> Probe {
    let sent = tokio::time::Instant::now();
    match shared
        .pool
        .renew_lease_and_probe(key, lease.token, hold)
        .await
    {
        Ok(Some(activity)) => {
            lease.valid_until = sent + hold;
            Probe::Renewed(Some(activity))
        }
        Ok(None) => Probe::Lost,
        Err(err) => {
            tracing::warn!(mode = %key.mode, error = %err, "lease renewal failed");
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
    lease: &mut HeldLease,
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
pub(super) async fn renew(shared: &Shared, key: &ModeKey, lease: &mut HeldLease) -> bool {
    let ttl = shared.config.lease_ttl;
    let sent = tokio::time::Instant::now();
    match shared.pool.renew_lease(key, lease.token, ttl).await {
        Ok(true) => {
            lease.valid_until = sent + ttl;
            true
        }
        Ok(false) => false,
        Err(err) => {
            tracing::warn!(mode = %key.mode, error = %err, "lease renewal failed");
            // Retry in a tenth of a lease time rather than at once.
            lease.valid_until = sent + ttl / 3 + ttl / 10;
            true
        }
    }
}
