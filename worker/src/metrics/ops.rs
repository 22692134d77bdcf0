//! The worker's live-ops families (docs/operations.md, 'Metrics'): how
//! searches end, why they wait, the quality of the matches made, the
//! webhook backlog; and the zero series of every closed label set, so a
//! dashboard or an alert reads 0 from the worker's start, never an absent
//! series.

use matchplane_matchmaker::Code;
use matchplane_store::pool::ModeKey;
use matchplane_store::search_ends::{
    failure_label, FAILURE_CODES, OUTCOMES, SEARCHES_ENDED, SEARCHES_FAILED,
};

/// Gauge: searches still waiting after the mode's last cycle, by `reason`
/// ([`WAITING_REASONS`]), per project and mode.
pub const WAITING: &str = "matchplane_searches_waiting";
/// Histogram: the MMR spread of each match a cycle formed (claimed, or
/// held as a proposal; highest minus lowest player MMR, points), per
/// project and mode.
pub const MATCH_SPREAD: &str = "matchplane_match_mmr_spread";
/// Histogram: the team imbalance of each match a cycle formed (highest
/// minus lowest team mean MMR, points), per project and mode.
pub const MATCH_IMBALANCE: &str = "matchplane_match_team_imbalance";
/// Gauge: webhook deliveries due now (pending, next attempt passed), all
/// projects, as this worker last counted them.
pub const WEBHOOK_BACKLOG: &str = "matchplane_webhook_backlog";

/// Every `reason` of [`WAITING`]: the waiting reasons' codes.
pub const WAITING_REASONS: [Code; 9] = [
    Code::PartyIncomplete,
    Code::PingNotMeasured,
    Code::NotEnoughPlayers,
    Code::NoCandidatesInRange,
    Code::NoExactSeating,
    Code::NoCommonRegion,
    Code::MatchingHeld,
    Code::RuleNotMet,
    Code::NoRoleSeating,
];

/// The buckets of [`MATCH_SPREAD`] and [`MATCH_IMBALANCE`] (MMR points).
pub(super) const QUALITY_BUCKETS: [f64; 12] = [
    0.0, 10.0, 25.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 500.0, 800.0, 1200.0,
];

/// Describes the live-ops families.
pub(super) fn describe() {
    use metrics::Unit;
    metrics::describe_counter!(
        SEARCHES_ENDED,
        Unit::Count,
        "Searches ended, by outcome (matched, expired, cancelled, failed); each process counts the ends it makes"
    );
    metrics::describe_counter!(
        SEARCHES_FAILED,
        Unit::Count,
        "Searches ended failed, by code (OTHER for a code outside the known set)"
    );
    metrics::describe_gauge!(
        WAITING,
        Unit::Count,
        "Searches still waiting after the mode's last cycle, by waiting reason, per project and mode"
    );
    metrics::describe_histogram!(
        MATCH_SPREAD,
        "MMR spread of each match a cycle formed (claimed, or held as a proposal), highest minus lowest player MMR (points), per project and mode"
    );
    metrics::describe_histogram!(
        MATCH_IMBALANCE,
        "Team imbalance of each match a cycle formed, highest minus lowest team mean MMR (points), per project and mode"
    );
    metrics::describe_gauge!(
        WEBHOOK_BACKLOG,
        Unit::Count,
        "Webhook deliveries due now (pending, next attempt passed) over all projects, as this worker last counted them"
    );
}

/// Registers (or keeps alive) every series of a closed label set at its
/// current value (0 at start): adding 0 marks a series as updated, so the
/// idle timeout ([`super::IDLE_SERIES_TIMEOUT`]) never drops a family an
/// alert reads. Called at start and on every full scheduler listing (once
/// a minute).
pub(super) fn keep_closed_sets() {
    for outcome in OUTCOMES {
        metrics::counter!(SEARCHES_ENDED, "outcome" => outcome).increment(0);
    }
    for code in FAILURE_CODES {
        metrics::counter!(SEARCHES_FAILED, "code" => code).increment(0);
    }
    for outcome in ["succeeded", "failed"] {
        metrics::counter!(super::DELIVERIES, "outcome" => outcome).increment(0);
    }
    for result in ["2xx", "4xx", "5xx", "error"] {
        metrics::counter!(super::ATTEMPTS, "result" => result).increment(0);
    }
    for counter in [super::CYCLES, super::IDLE_CYCLES] {
        metrics::counter!(counter).increment(0);
    }
    for gauge in [WEBHOOK_BACKLOG, super::MODES_HELD, super::WORKERS_LIVE] {
        metrics::gauge!(gauge).increment(0.0);
    }
}

/// Records `count` searches ended with `outcome` (one of
/// [`OUTCOMES`](matchplane_store::search_ends::OUTCOMES)).
pub fn searches_ended(outcome: &'static str, count: usize) {
    if count > 0 {
        metrics::counter!(SEARCHES_ENDED, "outcome" => outcome).increment(count as u64);
    }
}

/// Records searches ended `failed`, one per code in `codes`.
pub fn searches_failed<'c>(codes: impl IntoIterator<Item = &'c str>) {
    let mut failed = 0;
    for code in codes {
        failed += 1;
        metrics::counter!(SEARCHES_FAILED, "code" => failure_label(code)).increment(1);
    }
    searches_ended(matchplane_store::search_ends::FAILED, failed);
}

/// Sets `mode`'s waiting searches by reason after a cycle: every reason of
/// [`WAITING_REASONS`], 0 for those none waits for.
pub fn waiting(mode: &ModeKey, reasons: impl IntoIterator<Item = Code>) {
    let mut counts = [0usize; WAITING_REASONS.len()];
    for reason in reasons {
        if let Some(i) = WAITING_REASONS.iter().position(|r| *r == reason) {
            counts[i] += 1;
        }
    }
    for (reason, count) in WAITING_REASONS.iter().zip(counts) {
        let labels = [
            ("project", mode.project_id.clone()),
            ("mode", mode.mode.clone()),
            ("reason", reason.as_str().to_owned()),
        ];
        metrics::gauge!(WAITING, &labels).set(count as f64);
    }
}

/// Records the quality of one match a cycle of `mode` formed (claimed or
/// held as a proposal): its MMR spread and team imbalance (points).
pub fn quality(mode: &ModeKey, spread: f64, imbalance: f64) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::histogram!(MATCH_SPREAD, &labels).record(spread);
    metrics::histogram!(MATCH_IMBALANCE, &labels).record(imbalance);
}

/// Sets the webhook backlog: deliveries due now.
pub fn webhook_backlog(due: u64) {
    metrics::gauge!(WEBHOOK_BACKLOG).set(due as f64);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn closed_label_sets_outlive_the_idle_timeout() {
        let recorder = super::super::builder(Duration::from_millis(50))
            .unwrap()
            .build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, super::super::describe);
        let expired = r#"matchplane_searches_ended_total{outcome="expired"} 0"#;
        assert!(handle.render().contains(expired));
        std::thread::sleep(Duration::from_millis(120));
        // A full scheduler listing (once a minute) keeps them.
        metrics::with_local_recorder(&recorder, || {
            super::super::scheduler_pass(Duration::from_millis(1), true);
        });
        let text = handle.render();
        assert!(text.contains(expired), "{text}");
        assert!(
            text.contains(r#"matchplane_searches_failed_total{code="OTHER"} 0"#),
            "{text}"
        );
        assert!(text.contains("matchplane_webhook_backlog 0"), "{text}");
    }
}
