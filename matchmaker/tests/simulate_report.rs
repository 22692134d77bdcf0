//! The simulation's report as a user reads it (docs/simulate.md): events
//! past `until` said rather than dropped, no spread for a match without
//! MMRs, seconds written to the millisecond.
#![allow(clippy::unwrap_used)]

use matchplane_matchmaker::simulate::{render_table, run, Scenario};
use serde_json::{json, Value};

fn duel(algorithm: Value, step: f64, until: f64, arrivals: Value) -> String {
    json!({"gameMode": {"name": "duel", "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": step, "algorithm": algorithm},
        "tier": "enterprise", "seed": 1, "until": until, "arrivals": arrivals})
    .to_string()
}

fn mmr() -> Value {
    json!({"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2})
}

#[test]
fn an_inline_arrival_after_until_is_refused_naming_it() {
    let text = duel(
        mmr(),
        1.0,
        10.0,
        json!([{"at": 0, "playerId": "a", "mmr": 1500}, {"at": 1, "playerId": "b", "mmr": 1500},
               {"at": 10, "playerId": "c", "mmr": 1500},
               {"at": 500, "playerId": "d", "mmr": 1500}, {"at": 5000, "playerId": "e", "mmr": 1500}]),
    );
    let errors = Scenario::parse(&text).unwrap_err().0;
    let fields: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.field.as_str(), e.code.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("arrivals[3].at", "VALIDATION_ERROR"),
            ("arrivals[4].at", "VALIDATION_ERROR")
        ]
    );
    assert!(
        errors[0].message.starts_with("after `until` (10 s)"),
        "{}",
        errors[0].message
    );
}

#[test]
fn recorded_arrivals_after_the_last_cycle_are_counted_as_not_simulated() {
    // A recording longer than the run (a window's first minutes): its
    // arrivals run, the later ones are counted, in JSON and in the table.
    let text = duel(mmr(), 2.0, 11.0, json!([]));
    let mut scenario = Scenario::parse(&text).unwrap();
    let csv = "at,playerId,mmr\n0.5,a,1500\n1,b,1500\n10.5,c,1500\n500,d,1500\n5000,e,1500\n";
    scenario.add_arrivals_csv(csv, "arrivalsCsv").unwrap();
    let report = run(&scenario);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["stats"]["matches"], 1);
    // c arrived after the last cycle (10), d and e after `until`.
    assert_eq!(json["notSimulated"], 3, "{json}");
    assert!(
        render_table(&report, 5).contains("not simulated 3"),
        "{}",
        render_table(&report, 5)
    );
    // Absent when every arrival ran.
    let all_in = Scenario::parse(&duel(mmr(), 1.0, 10.0, json!([]))).unwrap();
    assert!(serde_json::to_value(run(&all_in)).unwrap()["notSimulated"].is_null());
}

#[test]
fn a_match_without_mmrs_has_no_spread_nor_imbalance() {
    let text = duel(
        json!({"type": "fifo"}),
        1.0,
        5.0,
        json!([{"at": 0, "playerId": "a"}, {"at": 0, "playerId": "b"}]),
    );
    let report = run(&Scenario::parse(&text).unwrap());
    let json = serde_json::to_value(&report).unwrap();
    let m = &json["matches"][0];
    assert_eq!(m["meanMmr"], json!([null, null]));
    assert!(m["mmrSpread"].is_null(), "{m}");
    assert!(m["teamImbalance"].is_null(), "{m}");
    let stats = &json["stats"];
    assert_eq!(
        stats["mmrSpread"],
        json!({"p50": null, "p90": null, "max": null})
    );
    assert_eq!(
        stats["teamImbalance"],
        json!({"p50": null, "p90": null, "max": null})
    );
    let table = render_table(&report, 5);
    let line = table
        .lines()
        .find(|l| l.ends_with("a vs b") || l.ends_with("b vs a"));
    let cells: Vec<&str> = line.unwrap().split_whitespace().collect();
    assert_eq!(cells[..3], ["1.0", "-", "-"], "{table}");
}

#[test]
fn the_reports_seconds_are_written_to_the_millisecond() {
    // Waits and times that binary floats cannot hold exactly
    // (0.7 * 3 = 2.0999999999999996, less 1.456 = 0.6439999999999997).
    let text = duel(
        mmr(),
        0.7,
        3.0,
        json!([{"at": 1.456, "playerId": "a", "mmr": 1500}, {"at": 1.5, "playerId": "b", "mmr": 1500},
               {"at": 2.25, "playerId": "c", "mmr": 100}]),
    );
    let report = run(&Scenario::parse(&text).unwrap());
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.contains(r#""at":2.1,"#), "{json}");
    assert!(
        json.contains(r#""waitSeconds":{"p50":0.6,"p90":0.644,"p99":0.644,"max":0.644}"#),
        "{json}"
    );
}

/// A party whose members disagree on a `string` attribute ends
/// `PARTY_ATTRIBUTES_DIFFER`, and its `ended` entry names the attribute, as
/// the live failure's message does.
#[test]
fn a_party_failed_for_its_attributes_is_ended_naming_the_attribute() {
    let text = json!({"gameMode": {"name": "duo", "matchShape": [2, 2],
        "matchmakingCycleDurationSeconds": 1, "algorithm": mmr(),
        "parties": {"allowParties": true, "maxSize": 2, "keepTogether": true},
        "attributes": {"build": {"type": "string"}},
        "rules": [{"name": "same-build", "type": "equal", "attribute": "build"}]},
        "tier": "enterprise", "seed": 1, "until": 5,
        "arrivals": [
            {"at": 0, "playerId": "a", "mmr": 1500, "party": {"id": "p", "members": ["a", "b"]},
             "attributes": {"build": "1.4"}},
            {"at": 0, "playerId": "b", "mmr": 1500, "party": {"id": "p", "members": ["a", "b"]},
             "attributes": {"build": "1.5"}}]})
    .to_string();
    let report = run(&Scenario::parse(&text).unwrap());
    let ended = serde_json::to_value(&report.ended).unwrap();
    let entry = ended
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == "PARTY_ATTRIBUTES_DIFFER")
        .unwrap_or_else(|| panic!("{ended}"));
    assert!(
        entry["message"]
            .as_str()
            .is_some_and(|m| m.contains("build")),
        "{entry}"
    );
}
