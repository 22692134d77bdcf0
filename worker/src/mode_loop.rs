//! The self-rescheduling loop of one game mode on one worker (SPEC 5):
//! take the mode's lease, then cycle, record the outbox, wait
//! `matchmakingCycleDurationSeconds`, again, renewing the lease all along.
//!
//! Exactly one worker runs a mode's cycle at a time: the lease (a Redis key
//! with an expiry and a fencing token) is taken with
//! [`Leases::acquire_lease`](matchplane_store::pool::Leases::acquire_lease)
//! and every claim carries its token, so a worker that lost the lease (a
//! long pause) cannot commit. A worker without the lease tries again every
//! half lease, with jitter, so modes spread over the workers and a killed
//! worker's modes are taken over within 1.5 lease times. On shutdown the
//! lease is released at once.
//!
//! The loop waits; the tick ([`crate::tick`]) never does (STYLE 9).

use crate::error::WorkerError;
use crate::modes::{self, ModeConfig};
use crate::record::Recorder;
use crate::tick::{TickOutcome, Ticker};
use crate::worker::Shared;
use chrono::Utc;
use matchplane_store::pool::ModeKey;
use rand::Rng;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Outbox batches recorded after each cycle at most (the rest waits a cycle).
const MAX_DRAIN_BATCHES: usize = 64;

/// Why a wait ended.
enum WaitEnd {
    Elapsed,
    Cancelled,
    LostLease,
    Changed,
}

/// Runs `key`'s loop until `cancel`, or until the mode is deleted (its
/// searches are then the sweep's, [`crate::sweep`]). `versions` carries the mode's version as the scheduler
/// last listed it; a change ends a wait early.
pub async fn run(
    shared: Arc<Shared>,
    key: ModeKey,
    mut versions: watch::Receiver<i64>,
    cancel: CancellationToken,
) {
    let mut cached: Option<(ModeConfig, Instant)> = None;
    loop {
        let Some(token) = acquire(&shared, &key, &cancel).await else {
            return;
        };
        tracing::info!(project_id = %key.project_id, mode = %key.mode, token, "mode lease taken");
        match held(&shared, &key, token, &mut cached, &mut versions, &cancel).await {
            Held::Lost => {
                tracing::info!(project_id = %key.project_id, mode = %key.mode, "mode lease lost");
            }
            Held::Done => {
                if let Err(err) = shared.pool.release_lease(&key, token).await {
                    tracing::warn!(mode = %key.mode, error = %err, "lease release failed");
                }
                return;
            }
        }
    }
}

/// Waits for the lease; `None` on cancel.
async fn acquire(shared: &Shared, key: &ModeKey, cancel: &CancellationToken) -> Option<u64> {
    let ttl = shared.config.lease_ttl;
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        match shared
            .pool
            .acquire_lease_in_epoch(key, &shared.config.worker_id, shared.epoch, ttl)
            .await
        {
            Ok(Some(token)) => return Some(token),
            Ok(None) => {}
            Err(err) => tracing::warn!(mode = %key.mode, error = %err, "lease acquire failed"),
        }
        let pause = ttl.mul_f64(rand::thread_rng().gen_range(0.25..0.5));
        tokio::select! {
            () = cancel.cancelled() => return None,
            () = tokio::time::sleep(pause) => {}
        }
    }
}

enum Held {
    /// The lease is gone: acquire again.
    Lost,
    /// Stop the loop (shutdown, or the mode deleted); release the lease.
    Done,
}

async fn held(
    shared: &Shared,
    key: &ModeKey,
    token: u64,
    cached: &mut Option<(ModeConfig, Instant)>,
    versions: &mut watch::Receiver<i64>,
    cancel: &CancellationToken,
) -> Held {
    let ttl = shared.config.lease_ttl;
    loop {
        let last = cached.as_ref().map(|(config, _)| config.clone());
        // Bounded: the lease is not renewed meanwhile, and a database that
        // does not answer must not hold the mode up.
        let limit = (ttl / 3).max(Duration::from_millis(250));
        let read = tokio::time::timeout(limit, modes::refresh(&shared.db, key, last))
            .await
            .unwrap_or(Err(WorkerError::Timeout("reading the mode")));
        let config = match read {
            Ok(Some(config)) => {
                *cached = Some((config.clone(), Instant::now()));
                config
            }
            Ok(None) => {
                // Deleted: record the matches its last cycles claimed, and stop.
                return match record(shared, key, token, false).await {
                    true => Held::Lost,
                    false => Held::Done,
                };
            }
            Err(err) => match known_config(cached.as_ref(), shared.config.config_grace) {
                // The database is out of reach: cycle on the last config
                // read, for `config_grace` since that read (pools, claims
                // and the outbox are in Redis; matches are stored later).
                Some(config) => {
                    tracing::warn!(mode = %key.mode, error = %err, version = config.version,
                        "reading the mode failed; cycling on the last known config");
                    config
                }
                None => {
                    tracing::warn!(mode = %key.mode, error = %err, "reading the mode failed");
                    // Matches claimed before stay in the outbox; trying to
                    // store them (under the last config's webhook setting)
                    // keeps their tickets' records while the outage lasts.
                    if let Some((stale, _)) = cached.as_ref() {
                        if record(shared, key, token, stale.webhook_enabled()).await {
                            return Held::Lost;
                        }
                    }
                    match wait(shared, key, token, ttl, versions, cancel, None).await {
                        WaitEnd::Cancelled => return Held::Done,
                        WaitEnd::LostLease => return Held::Lost,
                        WaitEnd::Elapsed | WaitEnd::Changed => continue,
                    }
                }
            },
        };
        versions.mark_unchanged();
        // A full lease for the cycle: never start one on a lease about to end.
        if !renew(shared, key, token).await {
            return Held::Lost;
        }

        if let Some(hook) = &shared.config.on_cycle {
            hook(key, true, Instant::now());
        }
        let ticker = Ticker {
            pool: shared.pool.as_ref(),
            db: &shared.db,
            claim_concurrency: shared.config.claim_concurrency,
            expire_batch: shared.config.expire_batch,
            ends: Some(&shared.ends),
        };
        let (result, lost) = renewing(
            shared,
            key,
            token,
            ticker.tick(key, &config, token, Utc::now()),
        )
        .await;
        if let Some(hook) = &shared.config.on_cycle {
            hook(key, false, Instant::now());
        }
        match result {
            Ok((TickOutcome::LostLease, _)) => return Held::Lost,
            Ok((outcome, report)) => {
                tracing::debug!(mode = %key.mode, ?outcome, pool = report.pool_size, "cycle");
            }
            Err(err) => tracing::warn!(mode = %key.mode, error = %err, "cycle failed"),
        }
        // Every open proposal the rule ends now: deadlines, and answers or
        // cancels whose closing their API instance did not apply.
        if let Err(err) =
            crate::proposals::sweep(shared.pool.as_ref(), key, now_secs(), f64::INFINITY).await
        {
            tracing::warn!(mode = %key.mode, error = %err, "proposal sweep failed");
        }
        if lost || record(shared, key, token, config.webhook_enabled()).await {
            return Held::Lost;
        }

        let pause = Duration::from_secs_f64(
            config
                .config
                .matchmaking_cycle_duration_seconds
                .clamp(0.01, 3600.0),
        );
        // Due proposals are closed between cycles in a mode with acceptance,
        // and in one that still has proposals open (acceptance turned off).
        let open = config.config.acceptance.is_some()
            || shared
                .pool
                .open_proposals(key, f64::INFINITY, 1)
                .await
                .is_ok_and(|open| !open.is_empty());
        let acceptance = open.then(|| config.webhook_enabled());
        match wait(shared, key, token, pause, versions, cancel, acceptance).await {
            WaitEnd::Cancelled => return Held::Done,
            WaitEnd::LostLease => return Held::Lost,
            WaitEnd::Elapsed | WaitEnd::Changed => {}
        }
    }
}

/// Unix seconds now (the proposal deadlines' clock).
fn now_secs() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

/// How often the lease holder closes due proposals between cycles: a
/// proposal's deadline is enforced within one second.
const PROPOSAL_SWEEP_EVERY: Duration = Duration::from_millis(400);

/// One proposal sweep between cycles: closes the due proposals, then
/// records the outbox (a proposal everyone accepted, made by an answer or
/// by this sweep); `true` if the lease was lost meanwhile.
async fn proposal_tick(shared: &Shared, key: &ModeKey, token: u64, webhooks: bool) -> bool {
    let now = now_secs();
    match crate::proposals::sweep(shared.pool.as_ref(), key, now, now).await {
        Ok(_) => {}
        Err(err) => tracing::warn!(mode = %key.mode, error = %err, "proposal sweep failed"),
    }
    record(shared, key, token, webhooks).await
}

/// The config last read, if it was read less than `grace` ago.
fn known_config(cached: Option<&(ModeConfig, Instant)>, grace: Duration) -> Option<ModeConfig> {
    cached
        .filter(|(_, read_at)| read_at.elapsed() < grace)
        .map(|(config, _)| config.clone())
}

/// Records what the mode's outbox holds (at most [`MAX_DRAIN_BATCHES`]
/// batches), renewing the lease; `true` if the lease was lost meanwhile.
async fn record(shared: &Shared, key: &ModeKey, token: u64, webhooks: bool) -> bool {
    let recorder = Recorder {
        pool: shared.pool.as_ref(),
        db: &shared.db,
        tickets: shared.tickets.as_deref(),
        consumer: &shared.config.worker_id,
        batch: shared.config.outbox_batch,
        min_idle: shared.config.outbox_min_idle,
        concurrency: shared.config.claim_concurrency,
        ends: Some(&shared.ends),
    };
    let drain = recorder.drain(key, webhooks, Utc::now(), MAX_DRAIN_BATCHES);
    let (drained, lost) = renewing(shared, key, token, drain).await;
    if let Err(err) = drained {
        tracing::warn!(mode = %key.mode, error = %err, "recording matches failed");
    }
    lost
}

/// Drives `work` to its end while renewing the lease every third of its
/// time; the flag says whether a renewal found the lease gone.
async fn renewing<F: Future>(
    shared: &Shared,
    key: &ModeKey,
    token: u64,
    work: F,
) -> (F::Output, bool) {
    let every = shared.config.lease_ttl / 3;
    let mut lost = false;
    tokio::pin!(work);
    loop {
        tokio::select! {
            out = &mut work => return (out, lost),
            () = tokio::time::sleep(every) => {
                if !lost && !renew(shared, key, token).await {
                    lost = true;
                }
            }
        }
    }
}

/// Renews the lease; `false` if it is gone (an error counts as still held:
/// the fencing token protects the claims, and the next renewal decides).
async fn renew(shared: &Shared, key: &ModeKey, token: u64) -> bool {
    match shared
        .pool
        .renew_lease(key, token, shared.config.lease_ttl)
        .await
    {
        Ok(held) => held,
        Err(err) => {
            tracing::warn!(mode = %key.mode, error = %err, "lease renewal failed");
            true
        }
    }
}

/// Waits `pause`, renewing the lease; ends early on cancel, a lost lease or
/// a new version of the mode. With `proposals` (the mode's webhook flag),
/// due proposals are closed and the outbox recorded every
/// [`PROPOSAL_SWEEP_EVERY`] meanwhile.
async fn wait(
    shared: &Shared,
    key: &ModeKey,
    token: u64,
    pause: Duration,
    versions: &mut watch::Receiver<i64>,
    cancel: &CancellationToken,
    proposals: Option<bool>,
) -> WaitEnd {
    let deadline = tokio::time::Instant::now() + pause;
    let every = shared.config.lease_ttl / 3;
    let mut sweep = tokio::time::interval(PROPOSAL_SWEEP_EVERY);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    sweep.reset();
    loop {
        tokio::select! {
            _ = sweep.tick(), if proposals.is_some() => {
                if proposal_tick(shared, key, token, proposals.unwrap_or(false)).await {
                    return WaitEnd::LostLease;
                }
            }
            () = tokio::time::sleep_until(deadline) => return WaitEnd::Elapsed,
            () = cancel.cancelled() => return WaitEnd::Cancelled,
            changed = versions.changed() => {
                if changed.is_err() {
                    // The scheduler stopped: so does the loop.
                    return WaitEnd::Cancelled;
                }
                return WaitEnd::Changed;
            }
            () = tokio::time::sleep(every) => {
                if !renew(shared, key, token).await {
                    return WaitEnd::LostLease;
                }
            }
        }
    }
}
