//! The worker's metrics of a match's life after its cycle: proposals
//! (acceptance), releases, backfills.

use super::{
    searches_ended, searches_failed, BACKFILLS_OPEN, BACKFILL_FILLS, BACKFILL_SEATS,
    BACKFILL_TIME_TO_FILL, DEAD_LETTERS, MATCHES, PROPOSALS, PROPOSALS_CLOSED, PROPOSAL_ANSWERS,
    RELEASES,
};
use matchplane_store::pool::ModeKey;
use matchplane_store::search_ends::MATCHED;

/// Records one proposal held.
pub fn proposed(mode: &ModeKey) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::counter!(PROPOSALS, &labels).increment(1);
}

/// Records the proposals the record consumer stored as made (every member
/// accepted), whichever process closed them.
pub fn proposals_made(mode: &ModeKey, rows: &[matchplane_store::entities::match_::Model]) {
    if rows.is_empty() {
        return;
    }
    let labels = |key: &'static str, value: &str| {
        [
            ("project", mode.project_id.clone()),
            ("mode", mode.mode.clone()),
            (key, value.to_owned()),
        ]
    };
    metrics::counter!(PROPOSALS_CLOSED, &labels("outcome", "made")).increment(rows.len() as u64);
    let accepts: usize = rows
        .iter()
        .filter_map(|row| row.answers.as_ref()?.as_object().map(|a| a.len()))
        .sum();
    metrics::counter!(PROPOSAL_ANSWERS, &labels("answer", "accepted")).increment(accepts as u64);
    // A made proposal ends its members' searches `matched`.
    searches_ended(MATCHED, accepts);
}

/// Records a cancelled proposal (from its closing's outbox record,
/// whichever process closed it): its outcome and each member's answer.
pub fn proposal_cancelled(
    mode: &ModeKey,
    closed: &matchplane_store::pool::closed::CancelledProposal,
) {
    let labels = |key: &'static str, value: &str| {
        [
            ("project", mode.project_id.clone()),
            ("mode", mode.mode.clone()),
            (key, value.to_owned()),
        ]
    };
    metrics::counter!(PROPOSALS_CLOSED, &labels("outcome", "cancelled")).increment(1);
    for answer in closed.answers.values() {
        let answer = match answer.as_str() {
            "accepted" => "accepted",
            "declined" => "declined",
            "timeout" => "timed_out",
            _ => continue,
        };
        metrics::counter!(PROPOSAL_ANSWERS, &labels("answer", answer)).increment(1);
    }
    // A member silent at the deadline fails; a decliner (or one who left)
    // ended its search as it did, counted where it did.
    searches_failed(
        closed
            .answers
            .values()
            .filter(|answer| *answer == "timeout")
            .map(|_| matchplane_matchmaker::Code::AcceptanceTimeout.as_str()),
    );
}

/// Records a made match released by the worker (`unassigned`: no
/// assignment in time).
pub fn released(mode: &ModeKey, status: &str) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
        ("status", status.to_owned()),
    ];
    metrics::counter!(RELEASES, &labels).increment(1);
}

/// Records one claimed backfill fill of `seats` players, each of which
/// waited `time_to_fill` seconds from the backfill's opening (if known).
pub fn backfilled(mode: &ModeKey, seats: usize, time_to_fill: Option<f64>) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::counter!(BACKFILL_FILLS, &labels).increment(1);
    metrics::counter!(BACKFILL_SEATS, &labels).increment(seats as u64);
    // A seat filled ends its search `matched`.
    searches_ended(MATCHED, seats);
    if let Some(seconds) = time_to_fill {
        let histogram = metrics::histogram!(BACKFILL_TIME_TO_FILL, &labels);
        for _ in 0..seats {
            histogram.record(seconds);
        }
    }
}

/// Records how many backfills a mode's cycle saw open.
pub fn backfills_open(mode: &ModeKey, open: usize) {
    let labels = [
        ("project", mode.project_id.clone()),
        ("mode", mode.mode.clone()),
    ];
    metrics::gauge!(BACKFILLS_OPEN, &labels).set(open as f64);
}

/// Touches every counted per-mode family of `labels` (`project`, `mode`)
/// without changing it, at each of the mode's cycles: each reads 0 from
/// the mode's first cycle, also for features the mode does not use, and
/// stays while the mode cycles (docs/operations.md, "Present from the
/// start"), so that an alert on a rate reads 0, never "no data".
pub(super) fn touch_mode_series(labels: &[(&'static str, String); 2]) {
    for family in [
        MATCHES,
        DEAD_LETTERS,
        PROPOSALS,
        BACKFILL_FILLS,
        BACKFILL_SEATS,
    ] {
        metrics::counter!(family, labels).increment(0);
    }
    let with = |key: &'static str, value: &'static str| {
        let [project, mode] = labels.clone();
        [project, mode, (key, value.to_owned())]
    };
    for outcome in ["made", "cancelled"] {
        metrics::counter!(PROPOSALS_CLOSED, &with("outcome", outcome)).increment(0);
    }
    for answer in ["accepted", "declined", "timed_out"] {
        metrics::counter!(PROPOSAL_ANSWERS, &with("answer", answer)).increment(0);
    }
    metrics::counter!(RELEASES, &with("status", "unassigned")).increment(0);
    metrics::gauge!(BACKFILLS_OPEN, labels).increment(0.0);
}
