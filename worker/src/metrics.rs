//! The worker's Prometheus metrics (docs/operations.md, 'Metrics'), recorded
//! through the `metrics` facade. Labels are the project id, the mode name and
//! an outcome: never a token, a secret or a URL.
//!
//! [`serve`] exposes them as Prometheus text on the worker's
//! `--metrics-listen` address, beside the liveness probe `/healthz`.

use matchplane_store::pool::ModeKey;
use matchplane_store::repos::retention::Pruned;
use matchplane_store::search_ends::MATCHED;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use std::time::Duration;

mod lifecycle;
mod ops;
mod serve;
pub use lifecycle::{
    backfilled, backfills_open, proposal_cancelled, proposals_made, proposed, released,
};
pub use matchplane_store::search_ends::{SEARCHES_ENDED, SEARCHES_FAILED};
pub use ops::{
    quality, searches_ended, searches_failed, waiting, webhook_backlog, MATCH_IMBALANCE,
    MATCH_SPREAD, WAITING, WAITING_REASONS, WEBHOOK_BACKLOG,
};
pub use serve::{check_dependencies, serve, Dependencies, DEPENDENCY_UP};

/// Histogram: wall time of one cycle, snapshot to last claim (seconds), per mode.
pub const CYCLE_DURATION: &str = "matchplane_cycle_duration_seconds";
/// Gauge: searches in the pool at the last cycle, per mode.
pub const POOL_SIZE: &str = "matchplane_pool_size";
/// Gauge: candidates (complete, eligible parties) at the last cycle, per mode.
pub const CANDIDATES: &str = "matchplane_cycle_candidates";
/// Counter: matches claimed, per mode.
pub const MATCHES: &str = "matchplane_matches_total";
/// Histogram: how long a search waited until its match (seconds), per mode.
pub const SEARCH_WAIT: &str = "matchplane_search_wait_seconds";
/// Counter: webhook deliveries ended, by `outcome` (`succeeded`, `failed`).
pub const DELIVERIES: &str = "matchplane_webhook_deliveries_total";
/// Counter: webhook attempts, by `result` (`2xx`, `4xx`, `5xx`, `error`).
pub const ATTEMPTS: &str = "matchplane_webhook_attempts_total";
/// Histogram: latency of one webhook attempt (seconds).
pub const ATTEMPT_LATENCY: &str = "matchplane_webhook_attempt_latency_seconds";

/// Counter: backfill fills claimed, per mode.
pub const BACKFILL_FILLS: &str = "matchplane_backfill_fills_total";
/// Counter: seats backfill fills took (players), per mode.
pub const BACKFILL_SEATS: &str = "matchplane_backfill_seats_filled_total";
/// Gauge: open backfills at the mode's last cycle, per mode.
pub const BACKFILLS_OPEN: &str = "matchplane_backfills_open";
/// Histogram: a filled seat's time from its backfill's opening to the
/// fill that took it (seconds), per mode.
pub const BACKFILL_TIME_TO_FILL: &str = "matchplane_backfill_time_to_fill_seconds";

/// Counter: outbox records that could not be read as a match and were kept
/// in `outbox_dead_letters` instead, per mode.
pub const DEAD_LETTERS: &str = "matchplane_outbox_dead_letters_total";

/// Counter: match proposals held (acceptance), per mode.
pub const PROPOSALS: &str = "matchplane_proposals_total";
/// Counter: answers of closed proposals' members, by `answer` (`accepted`,
/// `declined`, also a member who left; `timed_out`), per mode
/// (docs/acceptance.md, "Proposals and matches in the match views").
pub const PROPOSAL_ANSWERS: &str = "matchplane_proposal_answers_total";
/// Counter: proposals closed, by `outcome` (`made`, `cancelled`), per mode.
pub const PROPOSALS_CLOSED: &str = "matchplane_proposals_closed_total";
/// Counter: made matches released by the worker, by `status`
/// (`unassigned`), per mode; the API counts the studio's releases under the
/// same name with `status="released"`.
pub const RELEASES: &str = "matchplane_match_releases_total";

/// Counter: rows the retention pruning deleted, by `table` (`matches`,
/// `match_tickets`, `backfills`, `backfill_fills`, `webhook_deliveries`,
/// `webhook_attempts`, `rating_results`, `mode_stats_minutes`,
/// `search_recordings`).
pub const RETENTION_PRUNED: &str = "matchplane_retention_pruned_rows_total";
/// The `table` of [`RETENTION_PRUNED`] for the stats history; the others
/// are those of [`Pruned::by_table`] and [`RECORDINGS_TABLE`].
const STATS_MINUTES_TABLE: &str = "mode_stats_minutes";
/// The `table` of [`RETENTION_PRUNED`] for the search recordings.
const RECORDINGS_TABLE: &str = "search_recordings";
/// Histogram: wall time of one pruning batch (seconds): how long its
/// transaction held its rows.
pub const RETENTION_BATCH: &str = "matchplane_retention_batch_duration_seconds";
/// Gauge: when the last complete pruning pass started (Unix seconds).
pub const RETENTION_LAST_PASS: &str = "matchplane_retention_last_pass_timestamp_seconds";
/// Histogram: a mode's pause from one cycle's end to the next cycle's
/// start on this worker, over its `matchmakingCycleDurationSeconds` (1 is
/// on time; above it, the worker started the cycle late).
pub const CYCLE_PERIOD_RATIO: &str = "matchplane_cycle_period_ratio";
/// Counter: cycles started on this worker.
pub const CYCLES: &str = "matchplane_cycles_total";
/// Counter: cycles that found the mode idle (nothing in its pool, outbox,
/// proposals or backfills) and so cost only the lease renewal.
pub const IDLE_CYCLES: &str = "matchplane_idle_cycles_total";
/// Gauge: modes whose lease this worker holds.
pub const MODES_HELD: &str = "matchplane_worker_modes_held";
/// Gauge: live workers sharing the modes, as this worker last saw them.
pub const WORKERS_LIVE: &str = "matchplane_workers_live";
/// Histogram: wall time of one scheduler pass (listing the modes, handing
/// changes to their loops), by `listing` (`full`, `incremental`).
pub const SCHEDULER_PASS: &str = "matchplane_worker_scheduler_pass_seconds";

/// The buckets of [`CYCLE_PERIOD_RATIO`]: ±5, ±10, ±20, ±50 % of the period.
const PERIOD_RATIO_BUCKETS: [f64; 12] = [
    0.5, 0.8, 0.9, 0.95, 0.99, 1.01, 1.05, 1.1, 1.2, 1.5, 2.0, 5.0,
];

/// Records one cycle start: `period_ratio` is the pause since the mode's
/// previous cycle ended on this worker over its configured
/// `matchmakingCycleDurationSeconds` (1 when on time; `None` for a first
/// cycle on a new lease, or after a config change woke the mode).
pub fn cycle_started(idle: bool, period_ratio: Option<f64>) {
    metrics::counter!(CYCLES).increment(1);
    if idle {
        metrics::counter!(IDLE_CYCLES).increment(1);
    }
    if let Some(ratio) = period_ratio {
        metrics::histogram!(CYCLE_PERIOD_RATIO).record(ratio);
    }
}

/// Sets the number of modes this worker holds.
pub fn modes_held(count: usize) {
    metrics::gauge!(MODES_HELD).set(count as f64);
}

/// Records one scheduler pass: `full` when it listed the whole table
/// (once a minute: it also keeps the closed label sets' series, see
/// [`describe`]).
pub fn scheduler_pass(took: Duration, full: bool) {
    let listing = if full { "full" } else { "incremental" };
    if full {
        ops::keep_closed_sets();
        keep_retention_tables();
    }
    metrics::histogram!(SCHEDULER_PASS, "listing" => listing).record(took.as_secs_f64());
}

/// Sets the number of live workers this worker sees.
pub fn workers_live(count: usize) {
    metrics::gauge!(WORKERS_LIVE).set(count as f64);
}

/// Describes every worker metric (`# HELP` and unit) in the current
/// recorder and registers every series of a closed label set (search
/// outcomes and failure codes, webhook outcomes, the worker's counts, the
/// retention pruning's tables) at 0, so they read 0 from the start rather
/// than absent; [`install`] and [`build_recorder`] call it.
pub fn describe() {
    use metrics::Unit;
    ops::describe();
    ops::keep_closed_sets();
    keep_retention_tables();
    metrics::describe_histogram!(
        CYCLE_PERIOD_RATIO,
        "A mode's pause from one cycle's end to the next cycle's start on this worker, over its configured cycle duration (1 is on time)"
    );
    metrics::describe_counter!(CYCLES, "Cycles started on this worker");
    metrics::describe_counter!(
        IDLE_CYCLES,
        "Cycles that found their mode idle and cost only the lease renewal (one Redis round trip)"
    );
    metrics::describe_gauge!(MODES_HELD, "Modes whose lease this worker holds");
    metrics::describe_histogram!(
        SCHEDULER_PASS,
        Unit::Seconds,
        "Wall time of one scheduler pass over the modes (seconds), by listing (full, incremental)"
    );
    metrics::describe_gauge!(
        WORKERS_LIVE,
        "Live workers sharing the modes, as this worker last saw them"
    );
    metrics::describe_histogram!(
        CYCLE_DURATION,
        Unit::Seconds,
        "Wall time of one matchmaking cycle, pool snapshot to last claim (seconds), per project and mode"
    );
    metrics::describe_gauge!(
        POOL_SIZE,
        Unit::Count,
        "Searches in the pool at the mode's last cycle, per project and mode"
    );
    metrics::describe_gauge!(
        CANDIDATES,
        Unit::Count,
        "Candidates (complete, eligible parties) at the mode's last cycle, per project and mode"
    );
    metrics::describe_counter!(
        BACKFILL_FILLS,
        Unit::Count,
        "Backfill fills claimed, per project and mode"
    );
    metrics::describe_counter!(
        BACKFILL_SEATS,
        Unit::Count,
        "Seats backfill fills took (players), per project and mode"
    );
    metrics::describe_histogram!(
        BACKFILL_TIME_TO_FILL,
        Unit::Seconds,
        "Time from a backfill's opening to the fill that took a seat (seconds, one per seat), per project and mode"
    );
    metrics::describe_gauge!(
        BACKFILLS_OPEN,
        Unit::Count,
        "Open backfills at the mode's last cycle, per project and mode"
    );
    metrics::describe_counter!(
        MATCHES,
        Unit::Count,
        "Matches claimed, per project and mode"
    );
    metrics::describe_histogram!(
        SEARCH_WAIT,
        Unit::Seconds,
        "How long a matched search waited for its match (seconds), per project and mode"
    );
    metrics::describe_counter!(
        DELIVERIES,
        Unit::Count,
        "Webhook deliveries ended, by outcome (succeeded, failed)"
    );
    metrics::describe_counter!(
        ATTEMPTS,
        Unit::Count,
        "Webhook attempts, by result (2xx, 4xx, 5xx, error: no answer)"
    );
    metrics::describe_histogram!(
        ATTEMPT_LATENCY,
        Unit::Seconds,
        "Latency of one webhook attempt (seconds)"
    );
    metrics::describe_counter!(
        PROPOSALS,
        Unit::Count,
        "Match proposals held for acceptance, per project and mode"
    );
    metrics::describe_counter!(
        PROPOSAL_ANSWERS,
        Unit::Count,
        "Members of closed proposals by answer (accepted; declined, also one who left; timed_out), per project and mode"
    );
    metrics::describe_counter!(
        RELEASES,
        Unit::Count,
        "Made matches released, by status (released by the studio, unassigned), per project and mode"
    );
    metrics::describe_counter!(
        PROPOSALS_CLOSED,
        Unit::Count,
        "Match proposals closed, by outcome (made, cancelled), per project and mode"
    );
    metrics::describe_counter!(
        DEAD_LETTERS,
        Unit::Count,
        "Outbox records that could not be read as a match, kept as dead letters, per project and mode"
    );
    metrics::describe_counter!(
        RETENTION_PRUNED,
        Unit::Count,
        "Rows deleted by the retention pruning (older than the tier's retentionDays, stats history past 14 days, search recordings past their mode's recording retentionDays), by table"
    );
    metrics::describe_histogram!(
        RETENTION_BATCH,
        Unit::Seconds,
        "Wall time of one retention pruning batch (seconds)"
    );
    metrics::describe_gauge!(
        RETENTION_LAST_PASS,
        Unit::Seconds,
        "When the last complete retention pruning pass started (Unix seconds)"
    );
}

/// Registers [`RETENTION_PRUNED`]'s series of every table at 0 (its
/// `table` label is a closed set), so a table nothing was pruned from reads
/// 0 rather than absent.
fn keep_retention_tables() {
    let tables = Pruned::default().by_table().map(|(table, _)| table);
    for table in tables
        .into_iter()
        .chain([STATS_MINUTES_TABLE, RECORDINGS_TABLE])
    {
        metrics::counter!(RETENTION_PRUNED, "table" => table).increment(0);
    }
}

/// Records one pruning batch: the rows it deleted per table, the stats
/// minutes, and its wall time.
pub fn retention_batch(pruned: &Pruned, stats_minutes: u64, took: Duration) {
    for (table, rows) in pruned.by_table() {
        if rows > 0 {
            metrics::counter!(RETENTION_PRUNED, "table" => table).increment(rows);
        }
    }
    if stats_minutes > 0 {
        metrics::counter!(RETENTION_PRUNED, "table" => STATS_MINUTES_TABLE)
            .increment(stats_minutes);
    }
    metrics::histogram!(RETENTION_BATCH).record(took.as_secs_f64());
}

/// Records one pruning statement of the search recordings: the rows it
/// deleted and its wall time.
pub fn retention_recordings(rows: u64, took: Duration) {
    if rows > 0 {
        metrics::counter!(RETENTION_PRUNED, "table" => RECORDINGS_TABLE).increment(rows);
    }
    metrics::histogram!(RETENTION_BATCH).record(took.as_secs_f64());
}

/// Records a complete pruning pass started at `started`.
pub fn retention_pass(started: chrono::DateTime<chrono::Utc>) {
    metrics::gauge!(RETENTION_LAST_PASS).set(started.timestamp_millis() as f64 / 1e3);
}

/// Records `count` outbox records of `mode` moved to the dead letters.
pub fn dead_lettered(mode: &ModeKey, count: usize) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::counter!(DEAD_LETTERS, &labels).increment(count as u64);
}

/// Records the figures of one cycle of `mode`.
pub fn cycle(mode: &ModeKey, duration: Duration, pool_size: usize, candidates: usize) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::histogram!(CYCLE_DURATION, &labels).record(duration.as_secs_f64());
    metrics::gauge!(POOL_SIZE, &labels).set(pool_size as f64);
    metrics::gauge!(CANDIDATES, &labels).set(candidates as f64);
    lifecycle::touch_mode_series(&labels);
}

/// Records one claimed match of `mode` whose searches waited `waits` seconds.
pub fn matched(mode: &ModeKey, waits: impl Iterator<Item = f64>) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::counter!(MATCHES, &labels).increment(1);
    let histogram = metrics::histogram!(SEARCH_WAIT, &labels);
    let mut searches = 0;
    for wait in waits {
        histogram.record(wait);
        searches += 1;
    }
    searches_ended(MATCHED, searches);
}

/// Records one webhook attempt (`status`, `None` without an answer) and, if
/// it ended its delivery, the delivery's outcome.
pub fn attempt(status: Option<u16>, latency: Duration, ended: Option<&'static str>) {
    let result = match status {
        Some(200..=299) => "2xx",
        Some(400..=499) => "4xx",
        Some(_) => "5xx",
        None => "error",
    };
    metrics::counter!(ATTEMPTS, "result" => result).increment(1);
    metrics::histogram!(ATTEMPT_LATENCY).record(latency.as_secs_f64());
    if let Some(outcome) = ended {
        metrics::counter!(DELIVERIES, "outcome" => outcome).increment(1);
    }
}

/// How long a series may go without an update before it leaves the scrape
/// output: twice the longest cycle a mode may have (docs/game-modes.md, one hour), so a
/// live mode's series never go, and a deleted mode's (or project's) go
/// instead of showing their last values for ever. A counter that comes back
/// restarts from zero, which Prometheus reads as a reset.
pub const IDLE_SERIES_TIMEOUT: Duration =
    Duration::from_secs(2 * matchplane_matchmaker::validation::MAX_CYCLE_DURATION_SECONDS as u64);

/// The worker's recorder settings: histogram buckets (seconds) and series
/// dropped after `idle` without an update.
fn builder(idle: Duration) -> Result<PrometheusBuilder, String> {
    PrometheusBuilder::new()
        .idle_timeout(metrics_util::MetricKindMask::ALL, Some(idle))
        .set_buckets(&[
            0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
            120.0, 300.0,
        ])
        .and_then(|b| {
            b.set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full(CYCLE_PERIOD_RATIO.to_owned()),
                &PERIOD_RATIO_BUCKETS,
            )
        })
        .and_then(|b| {
            b.set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full(MATCH_SPREAD.to_owned()),
                &ops::QUALITY_BUCKETS,
            )
        })
        .and_then(|b| {
            b.set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full(MATCH_IMBALANCE.to_owned()),
                &ops::QUALITY_BUCKETS,
            )
        })
        .map_err(|e| e.to_string())
}

/// Installs the process-wide Prometheus recorder (once, at start-up).
///
/// # Errors
/// A text error if a recorder is already installed.
pub fn install() -> Result<PrometheusHandle, String> {
    let handle = builder(IDLE_SERIES_TIMEOUT)?
        .install_recorder()
        .map_err(|e| e.to_string())?;
    describe();
    Ok(handle)
}

/// A recorder with the worker's settings and descriptions, not installed
/// (record into it with `metrics::with_local_recorder`).
///
/// # Errors
/// A text error if the bucket settings are refused.
pub fn build_recorder() -> Result<PrometheusRecorder, String> {
    let recorder = builder(IDLE_SERIES_TIMEOUT)?.build_recorder();
    metrics::with_local_recorder(&recorder, describe);
    Ok(recorder)
}

#[cfg(test)]
mod tests;
