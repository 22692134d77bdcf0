//! The fenced lease that makes one worker a mode's owner, and the workers'
//! liveness ([`Leases`]; see the pool module's comment).

use super::{ModeActivity, ModeKey, PoolError};
use std::time::Duration;

/// Lease epochs stay below this (2²¹), so tokens stay below 2⁵³, exact in
/// the Redis scripts' numbers.
pub const MAX_LEASE_EPOCH: u64 = 1 << 21;

/// A mode's lease: which worker runs its cycle, fenced by a token that only
/// grows, so a worker that lost it cannot commit ([`Claims`] checks it).
#[async_trait::async_trait]
pub trait Leases: Send + Sync {
    /// Takes `mode`'s lease for `ttl` if nobody holds it, returning a fencing
    /// token greater than every token handed out before for this mode in
    /// epoch 0 ([`Leases::acquire_lease_in_epoch`]). `None` if another
    /// holder's lease is still running.
    async fn acquire_lease(
        &self,
        mode: &ModeKey,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, PoolError> {
        self.acquire_lease_in_epoch(mode, owner, 0, ttl).await
    }

    /// Takes `mode`'s lease for `ttl` if nobody holds it, with a token of
    /// `epoch`: `epoch × 2³²` plus the mode's fence counter. A worker takes
    /// its epoch once per start from the database, so tokens of two worker
    /// starts never repeat, even when the store loses its fence counter (a
    /// Redis restart without persistence): a token names its holder, and a
    /// renewal or claim under an older holder's token finds the lease
    /// gone. Within one epoch tokens grow as long as the counter is kept.
    /// `None` if another holder's lease is still running. `epoch` is taken
    /// modulo [`MAX_LEASE_EPOCH`].
    async fn acquire_lease_in_epoch(
        &self,
        mode: &ModeKey,
        owner: &str,
        epoch: u64,
        ttl: Duration,
    ) -> Result<Option<u64>, PoolError>;

    /// Extends the lease held under `token` to `ttl` from now. `false` if the
    /// lease expired or was taken by someone else: the caller lost it.
    async fn renew_lease(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<bool, PoolError>;

    /// Gives up the lease held under `token` (graceful shutdown), so another
    /// worker can take the mode at once. `false` if it was no longer held.
    async fn release_lease(&self, mode: &ModeKey, token: u64) -> Result<bool, PoolError>;

    /// [`Leases::renew_lease`] and a look at what the mode holds, in one
    /// round trip: the cycle's first store call, so an idle mode (nothing
    /// in any of its structures) costs this one call per cycle. `None` if
    /// the lease is lost (expired, or someone else's).
    async fn renew_lease_and_probe(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<Option<ModeActivity>, PoolError>;

    /// Keeps `held`, `mode`'s hold as a worker just read it from the
    /// database, for a worker that cannot read it (docs/game-modes.md,
    /// "Holding matching").
    async fn keep_hold(&self, mode: &ModeKey, held: bool) -> Result<(), PoolError>;

    /// The hold [`Leases::keep_hold`] kept for `mode` (`None` if none was).
    async fn kept_hold(&self, mode: &ModeKey) -> Result<Option<bool>, PoolError>;

    /// Says `worker` is alive for `ttl` from now and returns every worker
    /// alive (this one included), sorted: the workers that share the modes.
    /// A worker that stops calling drops out `ttl` after its last call.
    async fn worker_heartbeat(&self, worker: &str, ttl: Duration)
        -> Result<Vec<String>, PoolError>;

    /// Takes `worker` out of the live workers at once (graceful shutdown).
    async fn worker_leave(&self, worker: &str) -> Result<(), PoolError>;
}
