//! `simulate` runs the thin-pool rules: bot seats are `null` in `teams` and
//! `bot: true` in `players`, matches carry `matchShape` and `seatsOpen`,
//! and `unmatchedReasons` carry `found` and `needed` beside `code`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{run, Scenario};
use serde_json::{json, Value};

fn report(scenario: Value) -> Value {
    let scenario = Scenario::parse(&scenario.to_string()).unwrap();
    serde_json::to_value(run(&scenario)).unwrap()
}

#[test]
fn a_bot_match_and_a_relaxed_match_in_the_report() {
    let r = report(json!({
        "gameMode": {
            "name": "thin", "matchShape": [3, 3], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
            "relaxations": [{"afterSeconds": 10, "matchShape": [2, 2]}],
            "bots": {"fillAfterSeconds": 20, "minHumans": 2, "replaceable": true}
        },
        "until": 60,
        "arrivals": [
            {"at": 0, "playerId": "a", "mmr": 1500}, {"at": 0, "playerId": "b", "mmr": 1510},
            {"at": 0, "playerId": "c", "mmr": 1520}, {"at": 0, "playerId": "d", "mmr": 1530},
            {"at": 30, "playerId": "e", "mmr": 1500}, {"at": 30, "playerId": "f", "mmr": 1500},
            {"at": 40, "playerId": "g", "mmr": 2900}
        ]
    }));
    let matches = r["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{r}");
    let relaxed = &matches[0];
    assert_eq!(relaxed["at"], 10.0);
    assert_eq!(relaxed["matchShape"], json!([2, 2]));
    assert_eq!(relaxed["seatsOpen"], json!([1, 1]));
    let botted = &matches[1];
    assert_eq!(botted["at"], 50.0);
    assert_eq!(botted["matchShape"], json!([3, 3]));
    assert_eq!(botted["seatsOpen"], json!([2, 2]));
    let teams = botted["teams"].as_array().unwrap();
    assert!(teams.iter().all(|t| t.as_array().unwrap().len() == 3));
    assert_eq!(
        teams
            .iter()
            .flat_map(|t| t.as_array().unwrap())
            .filter(|p| p.is_null())
            .count(),
        4
    );
    let players = botted["players"].as_array().unwrap();
    assert_eq!(players.len(), 6);
    let bot = players.iter().find(|p| p["bot"] == true).unwrap();
    assert_eq!(bot["playerId"], Value::Null);
    assert_eq!(bot["mmr"], 1500.0);
    assert_eq!(r["unmatchedReasons"]["g"]["found"], 1);
    // g has waited 20 s at the end: bots apply, two humans are needed.
    assert_eq!(r["unmatchedReasons"]["g"]["needed"], 2);
    assert!(r["unmatchedReasons"]["g"]["code"].is_string());
}

#[test]
fn a_free_for_all_settles_in_the_report() {
    let r = report(json!({
        "gameMode": {
            "name": "ffa", "matchShape": {"teams": 8, "teamSize": {"min": 1, "max": 1}, "minTeams": 4},
            "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}
        },
        "until": 30,
        "arrivals": [
            {"at": 0, "playerId": "a"}, {"at": 0, "playerId": "b"},
            {"at": 0, "playerId": "c"}, {"at": 0, "playerId": "d"}, {"at": 0, "playerId": "e"}
        ]
    }));
    let m = &r["matches"][0];
    assert_eq!(m["at"], 15.0, "{r}");
    assert_eq!(m["matchShape"], json!([1, 1, 1, 1, 1]));
    assert_eq!(m["seatsOpen"], json!([0, 0, 0, 0, 0]));
}
