//! `simulate` with `leave` events: a leave opens the match's backfill, the
//! next cycles fill it from the waiting players before new matches, and the
//! report lists the backfill, its fills and the figures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{render_table, run, Scenario};
use serde_json::json;

fn scenario(backfill: bool) -> Scenario {
    let mut mode = json!({
        "name": "duel", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 5, "expansionMultiplier": 2}
    });
    if backfill {
        mode["backfill"] = json!({"ttlSeconds": 60});
    }
    let text = json!({
        "gameMode": mode, "tier": "enterprise", "seed": 1, "until": 40,
        "arrivals": [
            {"at": 0, "playerId": "a", "mmr": 1500}, {"at": 0, "playerId": "b", "mmr": 1510},
            {"at": 0, "playerId": "c", "mmr": 1490}, {"at": 0, "playerId": "d", "mmr": 1505},
            {"at": 10, "leave": ["b"]},
            {"at": 12, "playerId": "e", "mmr": 1502}
        ]
    });
    Scenario::parse(&text.to_string()).unwrap()
}

#[test]
fn a_leave_opens_a_backfill_that_the_next_arrival_fills() {
    let report = run(&scenario(true));
    assert_eq!(report.stats.matches, 1);
    assert_eq!(report.backfills.len(), 1);
    let b = &report.backfills[0];
    assert_eq!(
        (b.match_index, b.opened_at, b.status.as_str()),
        (0, 10.0, "filled")
    );
    assert_eq!(b.fills.len(), 1);
    assert_eq!(
        (b.fills[0].at, b.fills[0].players.clone()),
        (12.0, vec!["e".to_string()])
    );
    let stats = report.stats.backfill.as_ref().unwrap();
    assert_eq!(
        (stats.fills, stats.seats_filled, stats.seats_opened),
        (1, 1, 1)
    );
    assert_eq!(stats.time_to_fill.p50, Some(2.0));
    assert!(render_table(&report, 5).contains("time to fill"));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["backfills"][0]["match"], 0);
}

#[test]
fn without_backfill_a_leave_opens_nothing() {
    let report = run(&scenario(false));
    assert!(report.backfills.is_empty());
    assert!(report.stats.backfill.is_none());
    assert_eq!(report.unmatched, vec!["e".to_string()]);
}

/// The failures of the backfill scenario with `arrivals`, as (field, code,
/// message).
fn leave_failures(arrivals: serde_json::Value) -> Vec<(String, String, String)> {
    let text = json!({
        "gameMode": {
            "name": "duel", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 5, "expansionMultiplier": 2},
            "backfill": {"ttlSeconds": 60}
        },
        "until": 40,
        "arrivals": arrivals
    });
    Scenario::parse(&text.to_string())
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.code.to_string(), e.message))
        .collect()
}

/// A leave naming a player no arrival has (a typo), one who arrives only
/// later, or none at all would do nothing: it is refused and named
/// (docs/simulate.md, "Inline events").
#[test]
fn a_leave_of_a_player_who_has_not_arrived_or_of_nobody_is_refused() {
    let four = || {
        vec![
            json!({"at": 0, "playerId": "a", "mmr": 1500}),
            json!({"at": 0, "playerId": "b", "mmr": 1510}),
            json!({"at": 0, "playerId": "c", "mmr": 1490}),
            json!({"at": 0, "playerId": "d", "mmr": 1505}),
        ]
    };
    let mut typo = four();
    typo.push(json!({"at": 10, "leave": ["b", "nobody"]}));
    assert_eq!(
        leave_failures(json!(typo)),
        vec![(
            "arrivals[4].leave[1]".to_string(),
            "VALIDATION_ERROR".to_string(),
            "no arrival of \"nobody\" comes before this leave: it names a player of the scenario's arrivals"
                .to_string()
        )]
    );
    let mut empty = four();
    empty.push(json!({"at": 10, "leave": []}));
    assert_eq!(
        leave_failures(json!(empty)),
        vec![(
            "arrivals[4].leave".to_string(),
            "VALIDATION_ERROR".to_string(),
            "leave names at least one player".to_string()
        )]
    );
    let mut twice = four();
    twice.push(json!({"at": 10, "leave": ["a", "b", "a"]}));
    assert_eq!(
        leave_failures(json!(twice)),
        vec![(
            "arrivals[4].leave[2]".to_string(),
            "VALIDATION_ERROR".to_string(),
            "\"a\" is named twice".to_string()
        )]
    );
    // Written before its player's arrival, or at the same time before it:
    // applied first, it would do nothing either.
    let mut early = four();
    early.insert(0, json!({"at": 10, "leave": ["e"]}));
    early.push(json!({"at": 12, "playerId": "e", "mmr": 1502}));
    early.push(json!({"at": 12, "leave": ["f"]}));
    early.push(json!({"at": 12, "playerId": "f", "mmr": 1502}));
    let fields: Vec<String> = leave_failures(json!(early))
        .into_iter()
        .map(|(field, _, _)| field)
        .collect();
    assert_eq!(fields, ["arrivals[0].leave[0]", "arrivals[6].leave[0]"]);
}
