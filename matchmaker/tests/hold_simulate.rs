//! `simulate` with `hold` events (docs/game-modes.md#holding-matching): the cycles of a held
//! mode form nothing (its players wait `MATCHING_HELD`, nobody fails), its
//! open backfills are still filled, and the first cycle after the release
//! matches the players who waited.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{run, Scenario};
use serde_json::json;

fn scenario(arrivals: serde_json::Value, backfill: bool) -> Scenario {
    let mut mode = json!({
        "name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"}, "ticketTtlSeconds": 600
    });
    if backfill {
        mode["backfill"] = json!({"ttlSeconds": 120});
    }
    let text = json!({
        "gameMode": mode, "tier": "enterprise", "seed": 1, "until": 120,
        "arrivals": arrivals
    });
    Scenario::parse(&text.to_string()).unwrap()
}

#[test]
fn held_cycles_form_nothing_and_the_release_matches_at_the_next_cycle() {
    let report = run(&scenario(
        json!([
            {"at": 30, "hold": true},
            {"at": 40, "playerId": "a"}, {"at": 41, "playerId": "b"},
            {"at": 90, "hold": false}
        ]),
        false,
    ));
    assert_eq!(report.matches.len(), 1, "{:?}", report.matches);
    assert_eq!(report.matches[0].at, 90.0);
    assert!(report.ended.is_empty(), "nobody fails: {:?}", report.ended);
    // a waited from 40 to 90.
    assert_eq!(report.stats.wait_seconds.max, Some(50.0));

    // Held until the end: both still wait, MATCHING_HELD.
    let report = run(&scenario(
        json!([
            {"at": 30, "hold": true},
            {"at": 40, "playerId": "a"}, {"at": 41, "playerId": "b"}
        ]),
        false,
    ));
    assert!(report.matches.is_empty());
    assert_eq!(report.unmatched, ["a", "b"]);
    let reason = serde_json::to_value(&report.unmatched_reasons["a"]).unwrap();
    assert_eq!(reason["code"], "MATCHING_HELD");
}

#[test]
fn a_held_mode_still_fills_its_open_backfills() {
    let report = run(&scenario(
        json!([
            {"at": 0, "playerId": "a"}, {"at": 0, "playerId": "b"},
            {"at": 10, "hold": true},
            {"at": 20, "leave": ["b"]},
            {"at": 30, "playerId": "c"}, {"at": 30, "playerId": "d"}
        ]),
        true,
    ));
    // One match before the hold; c takes b's seat while held; d waits.
    assert_eq!(report.matches.len(), 1);
    assert_eq!(report.backfills.len(), 1);
    assert_eq!(report.backfills[0].fills.len(), 1);
    assert_eq!(report.backfills[0].fills[0].players, ["c"]);
    assert_eq!(report.unmatched, ["d"]);
}

#[test]
fn a_hold_event_has_only_at_and_hold() {
    let text = json!({
        "gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}},
        "until": 10,
        "arrivals": [{"at": 1, "hold": true, "playerId": "a"}]
    });
    let err = Scenario::parse(&text.to_string()).unwrap_err();
    assert_eq!(err.0[0].field, "arrivals[0]");
}

/// An event of no kind is told every kind it may be (docs/simulate.md,
/// "Inline events"): an arrival, a cancel, a leave or a hold.
#[test]
fn an_event_of_no_kind_lists_every_kind() {
    let text = json!({
        "gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}},
        "until": 10,
        "arrivals": [{"at": 0}]
    });
    let err = Scenario::parse(&text.to_string()).unwrap_err();
    assert_eq!(err.0[0].field, "arrivals[0]");
    assert_eq!(
        err.0[0].message,
        "an event has one of playerId (an arrival), cancel, leave or hold"
    );
}

/// A recording's window of most of a year (rows at about 340 days, 1 s
/// cycles: 2.9e7 cycles) is simulated: the idle cycles before its rows are
/// skipped, so `until` is bounded only against a typo. Before, any `until`
/// past 1e7 cycles (116 days at 1 s) was refused, so a window of the
/// recording the server replays could not be replayed locally.
#[test]
fn a_window_of_most_of_a_year_is_simulated() {
    let at = 29_343_757.0;
    let text = json!({
        "gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                     "algorithm": {"type": "fifo"}},
        "tier": "enterprise", "seed": 1, "until": at + 10.0,
        "arrivals": [{"at": at, "playerId": "a"}, {"at": at + 1.0, "playerId": "b"}]
    });
    let report = run(&Scenario::parse(&text.to_string()).unwrap());
    assert_eq!(report.matches.len(), 1, "{:?}", report.matches);
    // A typo is still refused.
    let mut typo = text;
    typo["until"] = json!(1e12);
    let refused = Scenario::parse(&typo.to_string()).err().unwrap();
    assert!(format!("{refused:?}").contains("until"), "{refused:?}");
}
