//! The self-rescheduling loop of one game mode on one worker (docs/game-modes.md#how-a-cycle-forms-matches):
//! take the mode's lease, then cycle with a pause of
//! `matchmakingCycleDurationSeconds` between the end of one cycle and the
//! start of the next (a slow cycle never shortens the pause), renewing the
//! lease all along.
//!
//! Exactly one worker runs a mode's cycle at a time: the lease (a Redis key
//! with an expiry and a fencing token) is taken with
//! [`Leases::acquire_lease`](matchplane_store::pool::Leases::acquire_lease)
//! and every claim carries its token, so a worker that lost the lease (a
//! long pause) cannot commit. Only the worker whose share the mode is
//! ([`crate::shares`]) tries to take it, every 10-30 % of a lease time; a
//! holder whose mode became another's gives it up at its next wait, so the
//! modes spread evenly and follow the workers joining and leaving. On
//! shutdown the lease is released at once.
//!
//! Each cycle starts with one store call, the lease renewal that also
//! counts what the mode holds
//! ([`Leases::renew_lease_and_probe`](matchplane_store::pool::Leases::renew_lease_and_probe)):
//! a mode with nothing in its pool, outbox, proposals and backfills ends
//! its cycle there (its figures are stored when it turns idle and once a
//! minute after), unless a made match's assignment wait it knows of is
//! over (`assignment::NextTimeout`: those matches are in PostgreSQL, out
//! of the probe's sight). The renewal gives the lease the cycle's pause
//! plus half a lease time (at most 1.5 lease times), so an idle mode whose
//! cycle is no longer than the lease time needs no renewal between cycles:
//! one round trip per cycle.
//!
//! The lease's renewals are in `lease`, the wait between cycles (and its
//! proposal sweeps) in `wait`, recording the outbox in `outbox`.
//!
//! The loop waits; the tick ([`crate::tick`]) never does (STYLE 9).

use crate::assignment::NextTimeout;
use crate::db_wait::Budget;
use crate::modes::ModeConfig;
use crate::tick::{TickOutcome, Ticker};
use crate::worker::{Listed, Shared};
use chrono::Utc;
use matchplane_store::pool::{ModeActivity, ModeKey};
use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

mod config;
mod lease;
mod outbox;
mod wait;

use config::{config_for_cycle, known_config};
use lease::{hold_for, probe, renewing, HeldLease, Probe};
use outbox::{record, Recorded, Recording};
use wait::{wait, ProposalSweeps, WaitEnd};

/// Runs `key`'s loop until `cancel`, or until the mode is deleted (its
/// searches are then the sweep's, [`crate::sweep`]). `versions` carries the
/// mode's version as the scheduler last listed it (a change ends a wait
/// early); `mine` whether the mode is this worker's share.
pub async fn run(
    shared: Arc<Shared>,
    key: ModeKey,
    versions: watch::Receiver<Listed>,
    mine: watch::Receiver<bool>,
    cancel: CancellationToken,
) {
    let mut lp = ModeLoop {
        shared: &shared,
        key: &key,
        versions,
        mine,
        cancel,
    };
    let mut cached: Option<(ModeConfig, Instant)> = None;
    loop {
        let Some(token) = acquire(&shared, &key, &mut lp.mine, &lp.cancel).await else {
            return;
        };
        tracing::debug!(project_id = %key.project_id, game_mode = %key.mode, token, "mode lease taken");
        let end = held(&mut lp, token, &mut cached).await;
        match end {
            HoldEnd::Lost => {
                tracing::info!(project_id = %key.project_id, game_mode = %key.mode, "mode lease lost");
            }
            HoldEnd::Handed => {
                tracing::debug!(project_id = %key.project_id, game_mode = %key.mode, "mode handed over");
                if let Err(err) = shared.pool.release_lease(&key, token).await {
                    tracing::warn!(game_mode = %key.mode, error = %err, "lease release failed");
                }
            }
            HoldEnd::Done => {
                if let Err(err) = shared.pool.release_lease(&key, token).await {
                    tracing::warn!(game_mode = %key.mode, error = %err, "lease release failed");
                }
                return;
            }
        }
    }
}

/// What a mode's loop works with across its leases: the worker's shared
/// state, the mode, the scheduler's channels (the mode's listed version,
/// and whether it is this worker's share) and the shutdown.
struct ModeLoop<'a> {
    shared: &'a Shared,
    key: &'a ModeKey,
    versions: watch::Receiver<Listed>,
    mine: watch::Receiver<bool>,
    cancel: CancellationToken,
}

/// Waits for the lease while the mode is this worker's share; `None` on
/// cancel.
async fn acquire(
    shared: &Shared,
    key: &ModeKey,
    mine: &mut watch::Receiver<bool>,
    cancel: &CancellationToken,
) -> Option<u64> {
    let ttl = shared.config.lease_ttl;
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        if !*mine.borrow_and_update() {
            tokio::select! {
                () = cancel.cancelled() => return None,
                changed = mine.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    continue;
                }
            }
        }
        match shared
            .pool
            .acquire_lease_in_epoch(key, &shared.config.worker_id, shared.epoch, ttl)
            .await
        {
            Ok(Some(token)) => return Some(token),
            Ok(None) => {}
            Err(err) => tracing::warn!(game_mode = %key.mode, error = %err, "lease acquire failed"),
        }
        let pause = ttl.mul_f64(rand::thread_rng().gen_range(0.1..0.3));
        tokio::select! {
            () = cancel.cancelled() => return None,
            () = tokio::time::sleep(pause) => {}
        }
    }
}

/// How holding the lease ended.
enum HoldEnd {
    /// The lease is gone: acquire again.
    Lost,
    /// The mode became another worker's: release the lease, and take it
    /// again only once it is this worker's share again.
    Handed,
    /// Stop the loop (shutdown, or the mode deleted); release the lease.
    Done,
}

/// When the figures of an idle mode are stored again (they are stored when
/// it turns idle, then at this pace).
const IDLE_FIGURES_EVERY: Duration = Duration::from_secs(60);

/// Cycles while the lease (`token`) is held; `cached` is the mode's config
/// as last read, kept across leases.
async fn held(
    lp: &mut ModeLoop<'_>,
    token: u64,
    cached: &mut Option<(ModeConfig, Instant)>,
) -> HoldEnd {
    let (shared, key) = (lp.shared, lp.key);
    let ttl = shared.config.lease_ttl;
    // Just taken for a lease time.
    let mut lease = HeldLease::taken(shared, token, ttl);
    // When the last cycle ended, and with which pause (the next is due a
    // full pause after it).
    let mut last_end: Option<(tokio::time::Instant, Duration)> = None;
    // When the last cycle started: the measured start-to-start period the
    // mode's stats show (`cyclePeriodSeconds`).
    let mut last_start: Option<tokio::time::Instant> = None;
    let mut period: Option<Duration> = None;
    // When the figures of this idle streak were last stored: as if at a
    // random moment of the last minute, so the modes a worker takes at
    // once (its start) spread their first writes over a minute.
    let mut idle_figures: Option<Instant> = Instant::now()
        .checked_sub(IDLE_FIGURES_EVERY.mul_f64(rand::thread_rng().gen_range(0.0..1.0)));
    let mut assignments = NextTimeout::unknown();
    // Incomplete parties' clocks and the last hold read (`tick::Carried`).
    let carried = crate::tick::Carried::default();
    // Whether the last cycle found its config replaced in the database.
    let mut replaced = false;
    // When the last cycle's attempt to store its outbox ended, if it failed.
    let mut unstored: Option<Instant> = None;
    // When proposals lost with the pool's data were last looked for.
    let mut lost_looked = Instant::now();
    loop {
        if !*lp.mine.borrow_and_update() {
            return HoldEnd::Handed;
        }
        let listed = lp.versions.borrow_and_update().clone();
        let read = config_for_cycle(shared, key, cached, listed, replaced).await;
        // Whether this cycle's config was read again for a replaced one.
        let reread = std::mem::take(&mut replaced);
        let config = match read {
            Ok(Some(config)) => {
                // Confirmed now: read, or listed at this version lately.
                *cached = Some((config.clone(), Instant::now()));
                config
            }
            Ok(None) => {
                // Deleted: record the matches its last cycles claimed, and stop.
                return match record(shared, key, &mut lease, Recording::BARE).await {
                    Recorded::Lost => HoldEnd::Lost,
                    Recorded::Stored | Recorded::Failed => HoldEnd::Done,
                };
            }
            Err(err) => match known_config(cached.as_ref(), shared.config.config_grace) {
                // The database is out of reach: cycle on the last config
                // read, for `config_grace` since that read (pools, claims
                // and the outbox are in Redis; matches are stored later).
                Some(config) => {
                    tracing::warn!(game_mode = %key.mode, error = %err, version = config.version,
                        "reading the mode failed; cycling on the last known config");
                    config
                }
                None => {
                    tracing::warn!(game_mode = %key.mode, error = %err, "reading the mode failed");
                    // Matches claimed before stay in the outbox; trying to
                    // store them (under the last config's webhook setting)
                    // keeps their tickets' records while the outage lasts.
                    if let Some((stale, _)) = cached.as_ref() {
                        let recording = Recording::of(stale);
                        if let Recorded::Lost = record(shared, key, &mut lease, recording).await {
                            return HoldEnd::Lost;
                        }
                    }
                    let until = tokio::time::Instant::now() + ttl;
                    match wait(lp, &mut lease, until, ProposalSweeps::Off).await {
                        WaitEnd::Cancelled => return HoldEnd::Done,
                        WaitEnd::LostLease => return HoldEnd::Lost,
                        WaitEnd::Handed => return HoldEnd::Handed,
                        WaitEnd::Elapsed | WaitEnd::Changed => continue,
                    }
                }
            },
        };
        lp.versions.mark_unchanged();
        let pause = Duration::from_secs_f64(
            config
                .config
                .matchmaking_cycle_duration_seconds
                .clamp(0.01, 3600.0),
        );
        let hold = hold_for(ttl, pause);

        // The cycle's first round trip: a full lease for the cycle (never
        // start one on a lease about to end), and whether there is work.
        let started = tokio::time::Instant::now();
        let activity = match probe(shared, key, &mut lease, hold).await {
            Probe::Lost => return HoldEnd::Lost,
            Probe::Renewed(activity) => activity,
            // Unknown: the full cycle finds out (its calls log their errors).
            Probe::Failed => None,
        };
        let idle = activity.is_some_and(|a| a.is_idle());
        let ratio = last_end
            .filter(|(_, period)| *period == pause)
            .map(|(at, _)| started.duration_since(at).as_secs_f64() / pause.as_secs_f64());
        crate::metrics::cycle_started(idle, ratio);
        // Measured only between two cycles on the clock (not after a config
        // change started one early); the last measure stands meanwhile.
        if let Some(at) = last_start.filter(|_| last_end.is_some()) {
            period = Some(started.duration_since(at));
        }
        last_start = Some(started);
        if let Some(hook) = &shared.config.on_cycle {
            hook(key, true, Instant::now());
        }
        if idle {
            // What the cycle may wait for the database (crate::db_wait).
            let budget = Budget::cycle();
            let pool = shared.pool.as_ref();
            let release = assignments.idle_cycle(pool, &shared.db, key, &config, &budget);
            if renewing(shared, key, &mut lease, release).await.1 {
                return HoldEnd::Lost;
            }
            let stale = idle_figures.is_none_or(|at| at.elapsed() >= IDLE_FIGURES_EVERY);
            if stale {
                crate::tick::record_idle(&shared.db, key, Utc::now(), period, &budget).await;
                idle_figures = Some(Instant::now());
            }
            if let Some(hook) = &shared.config.on_cycle {
                hook(key, false, Instant::now());
            }
        } else {
            idle_figures = None;
            assignments = NextTimeout::unknown();
            match full_cycle(shared, key, &mut lease, &config, activity, period, &carried).await {
                CycleEnd::Ran { unstored: failed } => unstored = failed,
                CycleEnd::Hold(end) => return end,
                CycleEnd::ConfigReplaced if !reread => {
                    // Read the new config and cycle on it now.
                    replaced = true;
                    last_end = None;
                    continue;
                }
                // Read again and still not the mode's (a read that failed,
                // a config this build cannot read): the next try waits the
                // usual pause, so a loop never spins on it.
                CycleEnd::ConfigReplaced => replaced = true,
            }
        }

        let drained = unstored.is_none() && activity.is_some_and(|a| a.outbox == 0);
        let stores = (shared.pool.as_ref(), &shared.db);
        crate::lost_proposals::look_if_due(stores, key, &config, drained, &mut lost_looked).await;

        // The next cycle is due a full pause after this one ended
        // (docs/game-modes.md, `matchmakingCycleDurationSeconds`): a slow
        // cycle never makes two cycles back to back.
        let ended = tokio::time::Instant::now();
        last_end = Some((ended, pause));
        let due = ended + pause;
        // Due proposals are closed between cycles in a mode with acceptance,
        // and in one that still has proposals open (acceptance turned off).
        let open = config.config.acceptance.is_some() || activity.is_none_or(|a| a.proposals > 0);
        let sweeps = match open {
            true => ProposalSweeps::On {
                recording: Recording::of(&config),
                // While the outbox could not be stored, the sweeps try
                // again seldom: the next cycle does (docs/operations.md,
                // "What losing a dependency costs").
                failed_at: unstored,
            },
            false => ProposalSweeps::Off,
        };
        match wait(lp, &mut lease, due, sweeps).await {
            WaitEnd::Cancelled => return HoldEnd::Done,
            WaitEnd::LostLease => return HoldEnd::Lost,
            WaitEnd::Handed => return HoldEnd::Handed,
            WaitEnd::Changed => {
                // Config changed: cycle now.
                assignments = NextTimeout::unknown();
                last_end = None;
            }
            WaitEnd::Elapsed => {}
        }
    }
}

/// How a cycle with work ended.
enum CycleEnd {
    /// It ran; the next is due a pause after it. `unstored`: when its
    /// attempt to store the outbox ended, if it failed.
    Ran { unstored: Option<Instant> },
    /// The mode was changed since its config was read: nothing was done,
    /// and the next cycle reads the config and runs at once.
    ConfigReplaced,
    /// The lease's hold ends.
    Hold(HoldEnd),
}

/// A cycle that has work: the tick, the proposal sweep and the outbox.
async fn full_cycle(
    shared: &Shared,
    key: &ModeKey,
    lease: &mut HeldLease<'_>,
    config: &ModeConfig,
    activity: Option<ModeActivity>,
    period: Option<Duration>,
    carried: &crate::tick::Carried,
) -> CycleEnd {
    let ticker = Ticker {
        pool: shared.pool.as_ref(),
        db: &shared.db,
        claim_concurrency: shared.config.claim_concurrency,
        expire_batch: shared.config.expire_batch,
        ends: Some(&shared.ends),
        lapses: Some(&shared.lapses),
        period,
        carried: Some(carried),
    };
    let token = lease.token;
    let asked = now_secs();
    let (result, lost) = renewing(
        shared,
        key,
        lease,
        ticker.tick(key, config, token, Utc::now()),
    )
    .await;
    if let Some(hook) = &shared.config.on_cycle {
        hook(key, false, Instant::now());
    }
    let cycle_answered = result.is_ok();
    match result {
        Ok((TickOutcome::LostLease, _)) => return CycleEnd::Hold(HoldEnd::Lost),
        Ok((TickOutcome::ConfigReplaced, _)) if !lost => return CycleEnd::ConfigReplaced,
        Ok((outcome, report)) => {
            tracing::debug!(game_mode = %key.mode, ?outcome, pool = report.pool_size, "cycle");
        }
        Err(err) => tracing::warn!(game_mode = %key.mode, error = %err, "cycle failed"),
    }
    // Every open proposal the rule ends now: deadlines, and answers or
    // cancels whose closing their API instance did not apply.
    let proposals = config.config.acceptance.is_some() || activity.is_none_or(|a| a.proposals > 0);
    if proposals {
        // A cycle that waited out a stall of the store (its calls wait up
        // to 30 s, so a shorter stall fails none) is an outage: a deadline
        // that passed in it holds nobody responsible.
        if cycle_answered {
            shared.lapses.answered(key, asked, now_secs());
        } else {
            shared.lapses.failed(key);
        }
        if let Err(err) = crate::proposals::sweep(
            shared.pool.as_ref(),
            key,
            (now_secs(), f64::INFINITY),
            Some(&shared.lapses),
        )
        .await
        {
            tracing::warn!(game_mode = %key.mode, error = %err, "proposal sweep failed");
        }
    }
    if lost {
        return CycleEnd::Hold(HoldEnd::Lost);
    }
    match record(shared, key, lease, Recording::of(config)).await {
        Recorded::Lost => CycleEnd::Hold(HoldEnd::Lost),
        Recorded::Stored => CycleEnd::Ran { unstored: None },
        Recorded::Failed => CycleEnd::Ran {
            unstored: Some(Instant::now()),
        },
    }
}

/// Unix seconds now (the proposal deadlines' clock).
fn now_secs() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}
