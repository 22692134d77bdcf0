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

/// Every `simulate` example shown with its output in README and `docs/` (an
/// `sh` block of one command line followed at once by a plain block) is
/// what the command prints today, byte for byte.
#[test]
fn simulate_examples_in_readme_and_docs_are_what_the_command_prints() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "md") {
            pages.push(path);
        }
    }
    let example = regex::Regex::new(
        r"(?m)^```sh\n(?:cargo run --release -- |matchplane )simulate ([^\n]*)\n```\n```\n((?s:.*?))```",
    )
    .unwrap();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for cap in example.captures_iter(&text) {
            let args: Vec<&str> = cap[1].split_whitespace().collect();
            let out = simulate(&args);
            assert!(
                out.status.success(),
                "{}: simulate {}",
                page.display(),
                &cap[1]
            );
            let printed = String::from_utf8(out.stdout).unwrap();
            assert_eq!(
                cap[2].trim_end(),
                printed.trim_end(),
                "{}: the output shown for `simulate {}` is stale",
                page.display(),
                &cap[1]
            );
            checked += 1;
        }
    }
    // README's example, and the docs' example and real-data replay.
    assert!(checked >= 3, "only {checked} examples found");
}

/// Every `simulate` transcript in `docs/` (a `text` block of `$ matchplane
/// simulate …`, continued with `\`, its output, then `$ echo $?` and the
/// exit code) prints what it shows and exits as it says; one whose
/// scenario file the repository does not carry (a reader's own) is left.
#[test]
fn simulate_transcripts_in_docs_are_what_the_command_prints() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let transcript = regex::Regex::new(
        r"(?m)^```text\n\$ matchplane simulate ((?:[^\n]*\\\n)*[^\n]*)\n((?s:.*?))\$ echo \$\?\n(\d+)\n```",
    )
    .unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let page = entry.unwrap().path();
        if page.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for cap in transcript.captures_iter(&text) {
            let line = cap[1].replace("\\\n", " ");
            let args: Vec<&str> = line.split_whitespace().collect();
            let scenario = args.iter().skip_while(|a| **a != "--scenario").nth(1);
            if scenario.is_none_or(|s| !root.join(s).exists()) {
                continue;
            }
            let out = simulate(&args);
            let printed = String::from_utf8(out.stdout).unwrap();
            assert_eq!(
                cap[2].trim_end(),
                printed.trim_end(),
                "{}: the output shown for `simulate {line}` is stale",
                page.display()
            );
            assert_eq!(
                out.status.code(),
                cap[3].parse().ok(),
                "{}: `simulate {line}`",
                page.display()
            );
            checked += 1;
        }
    }
    // docs/tuning.md's guard.
    assert!(checked >= 1, "no transcript found");
}

/// A reader that stops early (`| head`) ends the command quietly: no panic.
#[test]
fn a_closed_pipe_is_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args([
            "simulate",
            "--scenario",
            "examples/lichess-1v1.json",
            "--lichess",
            "data/lichess/lichess-games.csv",
            "--games",
            "3000",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
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

/// The command reads a scenario as the API's simulate route does: every
/// shape error by its path, in the API's words, the compared mode's too.
#[test]
fn shape_errors_are_named_by_path_as_the_api_names_them() {
    let dir = std::env::temp_dir().join(format!("mp-sim-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut scenario: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("examples/rules.json").unwrap()).unwrap();
    scenario.as_object_mut().unwrap().remove("arrivalsCsv");
    scenario["gameMode"]["rules"][1]["relax"] = serde_json::json!([{"afterSeconds": "x"}]);
    // An arrival's own shape error (its attributes are judged against the
    // mode's declarations, as a ticket's, once the mode can be read).
    scenario["arrivals"] = serde_json::json!([{"at": 0, "playerId": "a", "mmr": "high",
        "attributes": {"build": "1.4", "maps": ["dust", 3]}}]);
    let path = dir.join("shapes.json");
    std::fs::write(&path, scenario.to_string()).unwrap();
    let out = simulate(&["--scenario", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    let errors: Vec<(&str, &str)> = err["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        errors,
        [
            (
                "arrivals[0].mmr",
                "expected a number, got the string \"high\""
            ),
            (
                "gameMode.rules[1].relax[0].afterSeconds",
                "expected a number, got the string \"x\""
            ),
            (
                "gameMode.rules[1].relax[0].minOverlap",
                "this field is required"
            ),
        ],
        "{err}"
    );

    let other = dir.join("other.json");
    std::fs::write(
        &other,
        r#"{"name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "ping", "maxDelta": "far"}}"#,
    )
    .unwrap();
    let out = simulate(&[
        "--scenario",
        "examples/scenario.json",
        "--compare",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        err["errors"][0]["field"], "compare.algorithm.maxDelta",
        "{err}"
    );
    assert_eq!(
        err["errors"][0]["message"],
        "expected a number, got the string \"far\""
    );
}

/// A key given twice in the scenario file is refused as the API refuses it
/// in the route's body, never read as its last value.
#[test]
fn a_key_given_twice_in_the_scenario_is_refused() {
    let dir = std::env::temp_dir().join(format!("mp-sim-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("twice.json");
    std::fs::write(
        &path,
        r#"{"gameMode": {"name": "d", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}}, "until": 30, "until": 40}"#,
    )
    .unwrap();
    let out = simulate(&["--scenario", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["errors"][0]["field"], "until", "{err}");
    assert_eq!(err["errors"][0]["message"], "this field is given twice");
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

    // A file with lines that are not UTF-8 text names each as its row.
    let csv = b"at,playerId,mmr\n0,a,1500\n1,b\xff\xfe,1500\n2,c,1500\n3,\xc3,1500\n";
    std::fs::write(dir.join("missing.csv"), csv).unwrap();
    let out = simulate(&["--scenario", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    let fields: Vec<&str> = err["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["arrivalsCsv[1]", "arrivalsCsv[3]"], "{err}");
    assert_eq!(err["errors"][0]["message"], "the row is not UTF-8 text");
    std::fs::remove_dir_all(&dir).unwrap();
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

#[test]
fn compare_runs_a_second_mode_on_the_same_arrivals() {
    let out = simulate(&[
        "--scenario",
        "examples/scenario.json",
        "--compare",
        "examples/scenario-compare.json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // `a` is the scenario's own report, byte for byte the same figures.
    let alone = simulate(&["--scenario", "examples/scenario.json"]);
    let alone: serde_json::Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(json["a"]["stats"], alone["stats"]);
    assert!(json["b"]["stats"].is_object());
    assert_eq!(
        json["diff"]["matches"][0].as_f64(),
        alone["stats"]["matches"].as_f64()
    );
    let table = simulate(&[
        "--scenario",
        "examples/scenario.json",
        "--compare",
        "examples/scenario-compare.json",
        "--format",
        "table",
    ]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.starts_with("figure"), "{text}");
    assert!(text.contains("waitP90"), "{text}");
    // An invalid other mode exits 2 with codes, like the scenario's own.
    let bad = simulate(&[
        "--scenario",
        "examples/scenario.json",
        "--compare",
        "Cargo.toml",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

/// The guard on the bundled real games (docs/tuning.md): a tolerance
/// that never widens triples the p90 wait and is refused, exit 3.
#[test]
fn the_guard_refuses_a_tighter_tolerance_on_the_real_games() {
    let args = [
        "--scenario",
        "examples/lichess-1v1.json",
        "--lichess",
        "data/lichess/lichess-games.csv",
        "--games",
        "2000",
        "--rate",
        "2",
        "--compare",
        "examples/lichess-1v1-tight.json",
        "--guard",
        "waitP90,mmrSpreadP50",
    ];
    let out = simulate(&args);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let guard = &json["guard"];
    assert_eq!(guard["code"], "CONFIG_REGRESSION");
    let wait = &guard["figures"][0];
    assert_eq!(wait["figure"], "waitP90");
    assert!(wait["regressed"].as_bool().unwrap());
    let (a, b) = (
        wait["current"].as_f64().unwrap(),
        wait["proposed"].as_f64().unwrap(),
    );
    assert!(b >= 3.0 * a, "p90 wait {a} -> {b}");
    assert_eq!(
        guard["figures"][1]["regressed"], false,
        "the spread improves"
    );
    // Without the guard the same comparison exits 0.
    assert!(simulate(&args[..10]).status.success());
}

/// Flag values outside docs/configuration.md's ranges exit 2, each named
/// by its own flag: a negative `--decline-after` (with or without
/// `--decline-share`), a `--rate` that is not a positive number.
#[test]
fn flag_values_out_of_range_exit_2_naming_the_flag() {
    let fields = |args: &[&str]| {
        let out = simulate(&[&["--scenario", "examples/scenario.json"], args].concat());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        err["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                assert_eq!(e["code"], "VALIDATION_ERROR", "{err}");
                e["field"].as_str().unwrap().to_owned()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(fields(&["--decline-after=-5"]), ["declineAfter"]);
    assert_eq!(
        fields(&["--decline-share", "0.5", "--decline-after=-5"]),
        ["declineAfter"]
    );
    assert_eq!(fields(&["--decline-share", "1.5"]), ["declineShare"]);
    assert_eq!(
        fields(&[
            "--lichess",
            "data/lichess/lichess-games.csv",
            "--games",
            "2",
            "--rate",
            "0"
        ]),
        ["rate"]
    );
}
