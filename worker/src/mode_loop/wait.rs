//! The loop's wait between cycles: renewing the lease, closing due
//! proposals, and ending early on a change, a hand-over or shutdown.

use super::lease::{renew, HeldLease};
use super::{now_secs, record, ModeLoop, Recorded, Recording, Shared};
use matchplane_store::pool::ModeKey;
use std::time::{Duration, Instant};

/// Why a wait ended.
pub(super) enum WaitEnd {
    Elapsed,
    Cancelled,
    LostLease,
    Changed,
    /// The mode became another worker's.
    Handed,
}

/// How often the lease holder closes due proposals between cycles: a
/// proposal's deadline is enforced within one second.
const PROPOSAL_SWEEP_EVERY: Duration = Duration::from_millis(400);

/// How long after an attempt to record the outbox failed (the database
/// out) the sweeps between cycles try again: the cycle tries at each
/// cycle, and a pause shorter than this never waits on an attempt.
const UNSTORED_RETRY_EVERY: Duration = Duration::from_secs(5);

/// One proposal sweep between cycles: closes the due proposals, then
/// records the outbox (a proposal everyone accepted, made by an answer or
/// by this sweep) as `recording` says, unless its
/// last attempt failed less than [`UNSTORED_RETRY_EVERY`] before
/// (`failed_at`: when it ended; updated); `true` if the lease was lost
/// meanwhile.
async fn proposal_tick(
    shared: &Shared,
    key: &ModeKey,
    lease: &mut HeldLease<'_>,
    recording: Recording,
    failed_at: &mut Option<Instant>,
) -> bool {
    let now = now_secs();
    match crate::proposals::sweep(shared.pool.as_ref(), key, (now, now), Some(&shared.lapses)).await
    {
        Ok(_) => {}
        Err(err) => tracing::warn!(game_mode = %key.mode, error = %err, "proposal sweep failed"),
    }
    if failed_at.is_some_and(|at| at.elapsed() < UNSTORED_RETRY_EVERY) {
        return false;
    }
    match record(shared, key, lease, recording).await {
        Recorded::Lost => return true,
        Recorded::Stored => *failed_at = None,
        Recorded::Failed => *failed_at = Some(Instant::now()),
    }
    false
}

/// Whether a wait closes due proposals meanwhile.
#[derive(Clone, Copy)]
pub(super) enum ProposalSweeps {
    /// No sweeps.
    Off,
    /// Every [`PROPOSAL_SWEEP_EVERY`], recording the outbox after each
    /// (as `recording` says), less often while its last attempt failed
    /// (`failed_at`).
    On {
        recording: Recording,
        failed_at: Option<Instant>,
    },
}

/// Waits until `until`, renewing the lease when it nears its end; ends
/// early on cancel, a lost lease, a new version of the mode or the mode
/// becoming another worker's. With [`ProposalSweeps::On`], due proposals
/// are closed and the outbox recorded every [`PROPOSAL_SWEEP_EVERY`]
/// meanwhile.
pub(super) async fn wait(
    lp: &mut ModeLoop<'_>,
    lease: &mut HeldLease<'_>,
    until: tokio::time::Instant,
    sweeps: ProposalSweeps,
) -> WaitEnd {
    let (shared, key) = (lp.shared, lp.key);
    let (versions, mine, cancel) = (&mut lp.versions, &mut lp.mine, &lp.cancel);
    let ttl = shared.config.lease_ttl;
    let mut sweep = tokio::time::interval(PROPOSAL_SWEEP_EVERY);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    sweep.reset();
    let sweeping = matches!(sweeps, ProposalSweeps::On { .. });
    let (recording, mut failed_at) = match sweeps {
        ProposalSweeps::On {
            recording,
            failed_at,
        } => (recording, failed_at),
        ProposalSweeps::Off => (Recording::BARE, None),
    };
    loop {
        // In this order: a sweep that ran late never delays the end of the
        // wait, nor a renewal.
        tokio::select! {
            biased;
            () = cancel.cancelled() => return WaitEnd::Cancelled,
            () = tokio::time::sleep_until(until) => return WaitEnd::Elapsed,
            changed = versions.changed() => {
                if changed.is_err() {
                    // The scheduler stopped: so does the loop.
                    return WaitEnd::Cancelled;
                }
                return WaitEnd::Changed;
            }
            changed = mine.changed() => {
                if changed.is_err() {
                    return WaitEnd::Cancelled;
                }
                if !*mine.borrow_and_update() {
                    return WaitEnd::Handed;
                }
            }
            () = tokio::time::sleep_until(lease.renew_at(ttl)) => {
                if !renew(shared, key, lease).await {
                    return WaitEnd::LostLease;
                }
            }
            _ = sweep.tick(), if sweeping => {
                if proposal_tick(shared, key, lease, recording, &mut failed_at).await {
                    return WaitEnd::LostLease;
                }
            }
        }
    }
}
