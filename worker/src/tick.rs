//! One cycle of one mode on the worker (docs/game-modes.md#how-a-cycle-forms-matches): expire, snapshot, run the
//! matching core, fail what the config rules out, claim each match under the
//! lease's fencing token, store the waiting reasons and the cycle's figures
//! (the last cycle's, with a summary of its pool for a live view, and the
//! minute's, merged into the mode's stats history).
//!
//! A tick never sleeps and returns what happened ([`TickOutcome`]); the mode
//! loop alone decides to wait, retry or stop (STYLE 9).

use crate::db_wait::{Budget, HOLD_READ_LIMIT};
use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::pool_summary::PoolSummary;
use matchplane_matchmaker::{
    run_cycle_with_backfills, run_held_cycle_with_backfills, CycleOutcome, IncompleteParties,
    OpenBackfill, ProposedFill,
};
use matchplane_store::entities::mode_cycle_stat;
use matchplane_store::pool::{ModeKey, PoolStore};
use matchplane_store::repos::stats_history::Figures;
use rand::rngs::StdRng;
use rand::SeedableRng;
use sea_orm::DatabaseConnection;
use std::time::{Duration, Instant};

mod claims;
mod database;
mod fail;

pub(crate) use claims::claim_of;
use claims::{claim_all, Claimed};
pub(crate) use database::record_idle;
pub(crate) use fail::{fail_searches, fail_searches_ended};

/// What a tick came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickOutcome {
    /// At least one match was claimed.
    Matched(usize),
    /// The cycle ran and claimed nothing.
    Idle,
    /// A claim was refused: this worker's fencing token is stale. The loop
    /// must stop working on the mode.
    LostLease,
    /// The mode was changed (or deleted) since its config was read: the
    /// cycle stopped before reading the pool, and the loop reads the
    /// config again and runs the cycle on it at once.
    ConfigReplaced,
}

/// Where a tick spent its time, and what it saw (for metrics, the stats
/// route and the benchmark).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TickReport {
    /// Expiring due searches and reading the pool (snapshot).
    pub read_pool: Duration,
    /// The matching core.
    pub matching: Duration,
    /// Ending failed searches and claiming every match.
    pub claim: Duration,
    /// Waiting reasons and figures.
    pub annotate: Duration,
    /// Searches in the pool.
    pub pool_size: usize,
    /// Candidates of the cycle.
    pub candidates: usize,
    /// Matches claimed.
    pub matches: usize,
    /// Searches failed by the config.
    pub failed: usize,
    /// Claims refused because a search had gone (cancelled meanwhile).
    pub conflicts: usize,
    /// Groups held as proposals (a mode with acceptance).
    pub proposals: usize,
    /// Backfill fills claimed.
    pub fills: usize,
    /// Seats those fills took (players).
    pub seats_filled: usize,
    /// Whether the mode's matching was held (docs/game-modes.md, "Holding
    /// matching"): the cycle formed nothing but fills.
    pub held: bool,
}

/// What a tick runs against.
#[derive(Clone, Copy)]
pub struct Ticker<'a> {
    /// The pool store.
    pub pool: &'a dyn PoolStore,
    /// The database (for the cycle's figures).
    pub db: &'a DatabaseConnection,
    /// Store calls in flight at once when a cycle ends searches one by one
    /// (those a config change fails); claims go in batches of their own.
    pub claim_concurrency: usize,
    /// Searches expired per cycle at most.
    pub expire_batch: usize,
    /// Records the cycle's ends in modes that record; `None` records none.
    pub ends: Option<&'a crate::recordings::EndRecorder>,
    /// The worker's reach of the store, for the lapses excused after an
    /// outage ([`crate::lapse_grace`]); `None` excuses none.
    pub lapses: Option<&'a crate::lapse_grace::LapseGrace>,
    /// The measured start-to-start period that ended with this cycle's
    /// start (docs/game-modes.md, `matchmakingCycleDurationSeconds`),
    /// stored with the cycle's figures; `None` when unknown (a first
    /// cycle, one a config change started early).
    pub period: Option<Duration>,
    /// What the mode's loop carries from cycle to cycle; `None` times no
    /// party out and reads a hold the database cannot answer as none (a
    /// single tick in a test).
    pub carried: Option<&'a Carried>,
}

/// What a mode's loop carries from one cycle to the next.
#[derive(Debug, Default)]
pub struct Carried {
    /// How long each incomplete party of the mode has been so
    /// (docs/game-modes.md#parties).
    pub parties: std::sync::Mutex<IncompleteParties>,
    /// Whether the mode's matching was held at this loop's last read that
    /// answered (`None` before one): a cycle that cannot read the hold
    /// keeps it.
    pub held: std::sync::Mutex<Option<bool>>,
}

impl Ticker<'_> {
    /// Runs one cycle of `mode` with `config` under fencing token `token` at
    /// `now`.
    ///
    /// # Errors
    /// A pool store or database failure; claims already committed stay (their
    /// matches are in the outbox).
    pub async fn tick(
        &self,
        mode: &ModeKey,
        config: &ModeConfig,
        token: u64,
        now: DateTime<Utc>,
    ) -> Result<(TickOutcome, TickReport), WorkerError> {
        tick(self, mode, config, token, now).await
    }
}

/// Whether the database holds another revision of `mode` than `config`'s
/// (a new version, or the mode deleted and created again; a read that
/// fails counts as the same). A cycle
/// checks its config's version when it starts (`read_row`), but a change
/// may be stored while it runs, and the API checks new tickets against the
/// new config at once: a search the new config accepts may be refused by
/// the old one, and failing a search is for good. So a cycle fails
/// searches only under the mode's current config; on one the database has
/// replaced, the searches it would fail stay for the next cycle, on the
/// new config (docs/game-modes.md, "Changing a mode").
async fn superseded(
    db: &DatabaseConnection,
    mode: &ModeKey,
    config: &ModeConfig,
    budget: &Budget,
) -> bool {
    // Bounded as the hold's read: a database that answers nothing does
    // not hold the cycle up.
    let read = budget.try_run(
        "reading the mode's version",
        Some(HOLD_READ_LIMIT),
        crate::modes::revision(db, mode),
    );
    match read.await {
        Ok(Some(current)) if !config.is_at(&current) => {
            tracing::info!(game_mode = %mode.mode, cycle = config.version, current = current.version,
                "the cycle's config was replaced; its failures wait for the next cycle");
            true
        }
        Ok(_) => false,
        Err(err) => {
            tracing::warn!(game_mode = %mode.mode, error = %err,
                "reading the mode's version failed; failing searches on the cycle's config");
            false
        }
    }
}

async fn tick(
    ctx: &Ticker<'_>,
    mode: &ModeKey,
    config: &ModeConfig,
    token: u64,
    now: DateTime<Utc>,
) -> Result<(TickOutcome, TickReport), WorkerError> {
    let (pool, db) = (ctx.pool, ctx.db);
    let (claim_concurrency, expire_batch) = (ctx.claim_concurrency, ctx.expire_batch);
    let mut report = TickReport::default();
    let now_secs = now.timestamp_micros() as f64 / 1e6;
    // What the cycle may still wait for the database (docs/operations.md,
    // "What losing a dependency costs").
    let budget = Budget::cycle();

    let started = Instant::now();
    let expiry = crate::sweep::Expiry {
        ends: ctx.ends,
        lapses: ctx.lapses,
        limit: expire_batch,
    };
    expiry.run(pool, mode, now_secs).await?;
    // A disabled mode's open proposals end with it, before anyone's silence
    // can cool them down; its waiting searches fail in the re-check below
    // (docs/acceptance.md, 'How a proposal ends').
    if !config.config.enabled {
        matchplane_store::tickets::withdraw_proposals(pool, mode, now_secs).await?;
    }
    // A database out of reach delays the assignment timeouts, never the
    // cycle.
    if let Err(err) = crate::assignment::release_due(pool, db, mode, config, now, &budget).await {
        tracing::warn!(game_mode = %mode.mode, error = %err, "assignment timeouts failed");
    }
    let backfills = crate::backfill::open_backfills(pool, db, mode, config, now, &budget).await?;
    // Each backfill as read, by id: its opening, and the view its fills
    // grow (its roster, for the rules) when they are claimed.
    let views: std::collections::HashMap<String, OpenBackfill> = backfills
        .iter()
        .map(|b| (b.backfill_id.to_string(), b.clone()))
        .collect();
    let last_hold = ctx.carried.map(|c| &c.held);
    let row = database::read_row(db, pool, mode, config, last_hold, &budget).await;
    if row.replaced {
        // A change stored since the loop read its config: this cycle runs
        // on the new one, read at once by the loop (docs/game-modes.md,
        // "Changing a mode").
        return Ok((TickOutcome::ConfigReplaced, report));
    }
    let held = row.held;
    report.held = held;
    let searches = pool.snapshot(mode).await?;
    report.read_pool = started.elapsed();
    // The cycle's clock moves on by the time its reads took: a search that
    // started while they waited (a slow database) is never matched, nor
    // its match dated, before its own start.
    let now = now + report.read_pool;
    let now_secs = now.timestamp_micros() as f64 / 1e6;

    let started = Instant::now();
    // The parties' clocks go into the matching task and come back with it.
    let parties = ctx.carried.map(|c| &c.parties);
    let clocks = parties
        .map(|p| std::mem::take(&mut *p.lock().unwrap_or_else(std::sync::PoisonError::into_inner)));
    let matched = match_pool(config, searches, backfills, now_secs, held, clocks).await?;
    let (fills, outcome, summary, clocks) = matched;
    if let (Some(p), Some(clocks)) = (parties, clocks) {
        *p.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = clocks;
    }
    report.matching = started.elapsed();
    report.pool_size = outcome.pool_size;
    report.candidates = outcome.candidates;

    let started = Instant::now();
    // Backfills are served before new matches (docs/backfill.md).
    let filled =
        crate::backfill::claim_fills(pool, mode, config, token, now, &fills, &views).await?;
    report.fills = filled.fills;
    report.seats_filled = filled.seats;
    if filled.lease_lost {
        return Ok((TickOutcome::LostLease, report));
    }
    let to_fail = if outcome.failed.is_empty() || superseded(db, mode, config, &budget).await {
        &[][..]
    } else {
        &outcome.failed[..]
    };
    let failed = fail_searches_ended(pool, mode, to_fail, claim_concurrency).await?;
    report.failed = failed.len();
    if let Some(ends) = ctx.ends.filter(|_| config.config.records()) {
        ends.failed(mode, &failed, now.timestamp_millis()).await;
    }
    let mut lost = false;
    // With acceptance the groups are proposals; a mode whose acceptance was
    // turned off claims at once (its open proposals still close by their
    // own rules, in the proposal sweep).
    let claims = match &config.config.acceptance {
        Some(_) => {
            let proposed = crate::proposals::propose_all(
                ctx,
                mode,
                config,
                token,
                now,
                &outcome.matches,
                &budget,
            )
            .await?;
            report.proposals = proposed.held;
            report.conflicts += proposed.conflicts;
            lost = proposed.lost;
            Vec::new()
        }
        None => claim_all(pool, mode, config, token, now, &outcome.matches).await,
    };
    report.claim = started.elapsed();
    let mut claimed = Vec::new();
    let mut roles = matchplane_matchmaker::role_waits::RoleWaits::default();
    for result in claims {
        match result? {
            Claimed::Yes(waits, spread, seated) => {
                report.matches += 1;
                crate::metrics::matched(mode, waits.iter().copied());
                claimed.push((waits, spread));
                roles.merge(&seated);
            }
            Claimed::Conflict => report.conflicts += 1,
            Claimed::LeaseLost => lost = true,
        }
    }
    if lost {
        return Ok((TickOutcome::LostLease, report));
    }

    let started = Instant::now();
    let reasons: Vec<(String, String)> = outcome
        .waiting
        .iter()
        .filter_map(|w| {
            serde_json::to_string(&w.status())
                .ok()
                .map(|json| (w.ticket_id.to_string(), json))
        })
        .collect();
    crate::metrics::waiting(mode, outcome.waiting.iter().map(|w| w.reason.code()));
    if !reasons.is_empty() {
        pool.set_waiting_reasons(mode, &reasons).await?;
    }
    let total = report.read_pool + report.matching + report.claim;
    // Per rule, the candidates it turned away (docs/rules.md): the minute
    // adds them up, so the history tells which rule costs wait time. Per
    // role seat, the claimed matches' players and their waits
    // (docs/rules.md, "Role waits").
    let figures = Figures {
        proposals: report.proposals as i64,
        ..Figures::of_cycle(
            report.pool_size,
            claimed
                .iter()
                .map(|(waits, spread)| (waits.as_slice(), Some(*spread))),
        )
    }
    .with_rules(&outcome.rule_turned_away);
    let last = mode_cycle_stat::Model {
        project_id: mode.project_id.clone(),
        game_mode: mode.mode.clone(),
        pool_size: report.pool_size as i64,
        candidates: report.candidates as i64,
        matches: report.matches as i64,
        duration_ms: total.as_secs_f64() * 1e3,
        ran_at: now,
        pool_summary: serde_json::to_string(&summary).ok(),
        period_seconds: ctx.period.map(|p| p.as_secs_f64()),
    };
    let figures = figures.with_roles(&roles);
    database::store_figures(db, mode, last, now, &figures, &budget).await;
    crate::metrics::cycle(mode, total, report.pool_size, report.candidates);
    report.annotate = started.elapsed();
    let outcome = match report.matches + report.proposals + report.fills {
        0 => TickOutcome::Idle,
        n => TickOutcome::Matched(n),
    };
    Ok((outcome, report))
}

/// What [`match_pool`] decided: the fills, the cycle, the pool's summary
/// and the parties' clocks after it.
type Matched = (
    Vec<ProposedFill>,
    CycleOutcome,
    PoolSummary,
    Option<IncompleteParties>,
);

/// Runs the matching core off the async threads (it is CPU-bound): the
/// open backfills' fills first, then new matches from the rest; then the
/// incomplete parties' timeout (when `clocks` are kept); and sums up the
/// pool it saw for a live view.
async fn match_pool(
    config: &ModeConfig,
    searches: Vec<matchplane_matchmaker::Search>,
    backfills: Vec<OpenBackfill>,
    now_secs: f64,
    held: bool,
    clocks: Option<IncompleteParties>,
) -> Result<Matched, WorkerError> {
    let config = config.config.clone();
    let seed: u64 = rand::random();
    let (outcome, searches) = tokio::task::spawn_blocking(move || {
        let mut out = if held {
            run_held_cycle_with_backfills(&config, &searches, &backfills, now_secs)
        } else {
            let mut rng = StdRng::seed_from_u64(seed);
            run_cycle_with_backfills(&config, &searches, &backfills, now_secs, &mut rng)
        };
        let clocks = clocks.map(|mut clocks| {
            clocks.settle(&config, now_secs, &mut out.cycle);
            clocks
        });
        let summary = PoolSummary::of(&searches, &out.cycle);
        ((out.fills, out.cycle, summary, clocks), searches)
    })
    .await
    .map_err(|e| WorkerError::Task(e.to_string()))?;
    // The snapshot is freed beside the claims rather than before them: the
    // outcome shares its ids, and 100 000 searches take milliseconds to free.
    tokio::task::spawn_blocking(move || drop(searches));
    Ok(outcome)
}
