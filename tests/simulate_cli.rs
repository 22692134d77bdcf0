//! `matchplane simulate` as a user runs it: output, determinism, exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn simulate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .arg("simulate")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn example_scenario_prints_spec_json_and_is_deterministic() {
    let a = simulate(&["--scenario", "examples/scenario.json"]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = simulate(&["--scenario", "examples/scenario.json"]);
    assert_eq!(a.stdout, b.stdout, "same seed, same output, byte for byte");
    let json: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    for key in ["matches", "unmatched", "unmatchedReasons", "stats"] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["stats"]["matches"], 2);
    // Those still waiting count, and their waits are censored at `until`.
    let unmatched = json["unmatched"].as_array().unwrap().len();
    assert_eq!(json["stats"]["stillWaiting"], unmatched);
    let all = json["stats"]["waitSecondsAll"]["max"].as_f64().unwrap();
    let matched = json["stats"]["waitSeconds"]["max"].as_f64().unwrap();
    assert!(all >= matched, "{}", json["stats"]);
    assert_eq!(json["unmatchedReasons"]["hana"]["code"], "PARTY_INCOMPLETE");
    // The duo ana+ben sits together.
    let first = &json["matches"][0]["teams"];
    assert!(first
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == &serde_json::json!(["ana", "ben"])));
}

/// README shows the example's table as the command prints it, byte for byte.
#[test]
fn readme_shows_the_example_table_as_printed() {
    let out = simulate(&["--scenario", "examples/scenario.json", "--format", "table"]);
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let command = "simulate --scenario examples/scenario.json --format table\n```\n```\n";
    let start = readme.find(command).expect("README shows the command") + command.len();
    let shown = &readme[start..start + readme[start..].find("```").unwrap()];
    assert_eq!(
        shown.trim_end(),
        printed.trim_end(),
        "README's table is stale"
    );
}

#[test]
fn table_format_is_readable() {
    let out = simulate(&["--scenario", "examples/scenario.json", "--format", "table"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("wait seconds"));
    assert!(text.contains("wait (all)"));
    assert!(text.contains("PARTY_INCOMPLETE"));
}

#[test]
fn invalid_scenario_exits_2_with_spec_codes() {
    let dir = std::env::temp_dir().join(format!("mp-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(
        &path,
        r#"{"gameMode": {"name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 0.5,
            "algorithm": {"type": "ping", "maxDelta": 50}}, "tier": "free", "until": 10}"#,
    )
    .unwrap();
    let out = simulate(&["--scenario", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "CYCLE_DURATION_BELOW_TIER_FLOOR");
    assert_eq!(
        err["errors"][0]["field"],
        "gameMode.matchmakingCycleDurationSeconds"
    );
}

#[test]
fn a_missing_arrivals_csv_is_an_invalid_scenario() {
    let dir = std::env::temp_dir().join(format!("mp-sim-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scenario.json");
    std::fs::write(
        &path,
        r#"{"gameMode": {"name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}}, "until": 10, "arrivalsCsv": "missing.csv"}"#,
    )
    .unwrap();
    let out = simulate(&["--scenario", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "VALIDATION_ERROR");
    assert_eq!(err["errors"][0]["field"], "arrivalsCsv");
}

/// A config that strands players shows it: those still waiting at `until`
/// are counted, and their waits (censored at `until`) are in
/// `waitSecondsAll`, not in `waitSeconds` (matched players only).
#[test]
fn stranded_players_count_in_the_waits() {
    let dir = std::env::temp_dir().join(format!("mp-sim-stranded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stranded.json");
    std::fs::write(
        &path,
        r#"{"gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}, "ticketTtlSeconds": 600}, "tier": "pro", "until": 50,
            "arrivals": [{"at": 0, "playerId": "a"}, {"at": 0, "playerId": "b"},
                         {"at": 0, "playerId": "c"}, {"at": 20, "playerId": "d"},
                         {"at": 25, "playerId": "e"}]}"#,
    )
    .unwrap();
    let out = simulate(&["--scenario", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats = &json["stats"];
    // Two of a, b, c at 1 s, the third with d at 20 s (a 20 s wait);
    // e waits from 25 s to the end (50 s): 25 s, counted only in the "all".
    assert_eq!(stats["matchedPlayers"], 4, "{stats}");
    assert_eq!(stats["stillWaiting"], 1, "{stats}");
    assert_eq!(stats["waitSeconds"]["max"], 20.0, "{stats}");
    assert_eq!(stats["waitSecondsAll"]["max"], 25.0, "{stats}");
    let out = simulate(&["--scenario", path.to_str().unwrap(), "--format", "table"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("still waiting 1"), "{text}");
}
