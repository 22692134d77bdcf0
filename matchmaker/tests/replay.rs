//! The real-data replay (issue item 6) on a slice of the Lichess games:
//! the invariants of the core hold on real input, and matchplane's pairings
//! are closer in rating than the real ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{lichess_arrivals, run, Event, Scenario};
use matchplane_matchmaker::tolerance::mmr_range;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// The repository's `data/lichess/lichess-games.csv`.
pub fn games_csv() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/lichess/lichess-games.csv");
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

const SCENARIO: &str = include_str!("../../examples/lichess-1v1.json");

#[test]
fn replay_of_real_games_keeps_every_invariant() {
    let csv = games_csv();
    let replay = lichess_arrivals(&csv, 3000, 20.0).unwrap();
    assert_eq!(replay.real_gaps.len(), 3000);
    let mut scenario = Scenario::parse(SCENARIO).unwrap();
    scenario.until = 320.0;
    scenario.add_events(replay.events.clone(), "games").unwrap();
    let report = run(&scenario);
    assert!(
        report.stats.matches > 1000,
        "{} matches",
        report.stats.matches
    );

    // Arrival times per player, in order.
    let mut arrivals: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
    for e in &replay.events {
        if let Event::Arrival {
            at, player_id, mmr, ..
        } = e
        {
            arrivals
                .entry(player_id)
                .or_default()
                .push((*at, mmr.unwrap()));
        }
    }
    let mut last_matched: HashMap<String, f64> = HashMap::new();
    let mut at_cycle: HashMap<u64, HashSet<String>> = HashMap::new();
    for m in &report.matches {
        assert_eq!(m.teams.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 1]);
        let mut sides = Vec::new();
        for team in &m.teams {
            let player = team[0].clone().expect("a human");
            let player = &player;
            assert!(
                at_cycle
                    .entry(m.at.to_bits())
                    .or_default()
                    .insert(player.clone()),
                "{player} in two matches at {}",
                m.at
            );
            // Its search started at its first arrival after its last match.
            let after = last_matched
                .get(player)
                .copied()
                .unwrap_or(f64::NEG_INFINITY);
            let &(queued, mmr) = arrivals[player.as_str()]
                .iter()
                .find(|(at, _)| *at > after)
                .unwrap();
            assert!(queued <= m.at);
            last_matched.insert(player.clone(), m.at);
            sides.push((mmr, mmr_range(0.0, 3000.0, 2.0, 2.0, m.at - queued)));
        }
        let gap = (sides[0].0 - sides[1].0).abs();
        assert!(
            gap <= sides[0].1.min(sides[1].1) + 1e-9,
            "gap {gap} outside range at {}",
            m.at
        );
        assert_eq!(Some(gap), m.mmr_spread);
    }
    // Everyone not matched is still waiting for a reason.
    for p in &report.unmatched {
        assert!(report.unmatched_reasons.contains_key(p));
    }
    // Closer pairings than the real games, at a modest wait.
    let real = matchplane_matchmaker::simulate::Spread::of(&replay.real_gaps);
    assert!(report.stats.mmr_spread.p50.unwrap() < real.p50.unwrap());
    assert!(report.stats.mmr_spread.p90.unwrap() < real.p90.unwrap());
}

#[test]
fn same_seed_same_output_byte_for_byte() {
    let text = include_str!("../../examples/scenario.json");
    let csv = include_str!("../../examples/scenario-arrivals.csv");
    let once = || {
        let mut s = Scenario::parse(text).unwrap();
        s.add_events(
            matchplane_matchmaker::simulate::parse_arrivals_csv(csv, None).unwrap(),
            "arrivalsCsv",
        )
        .unwrap();
        serde_json::to_string(&run(&s)).unwrap()
    };
    assert_eq!(once(), once());
}

#[test]
fn invalid_scenarios_name_every_failure_with_spec_codes() {
    let bad = r#"{"gameMode": {"name": "x", "matchShape": [20, 20], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 1, "expansionMultiplier": 1}},
        "tier": "free", "until": 10}"#;
    let err = Scenario::parse(bad).unwrap_err();
    let codes: Vec<&str> = err.0.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(
        codes,
        vec![
            "MATCH_SIZE_LIMIT_EXCEEDED",
            "CYCLE_DURATION_BELOW_TIER_FLOOR",
            "TOLERANCE_BELOW_TIER_FLOOR"
        ]
    );
    let no_mmr = r#"{"gameMode": {"name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}},
        "until": 10, "arrivals": [{"at": 0, "playerId": "a"}, {"at": 1, "playerId": "b", "mmr": 4000}]}"#;
    let err = Scenario::parse(no_mmr).unwrap_err();
    let codes: Vec<&str> = err.0.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(codes, vec!["MMR_REQUIRED", "MMR_OUT_OF_RANGE"]);
    assert!(Scenario::parse("{ not json").is_err());
}

#[test]
fn a_scenario_that_would_run_forever_is_refused() {
    let text = r#"{"gameMode": {"name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 0.1,
        "algorithm": {"type": "fifo"}}, "tier": "enterprise", "until": 1e12}"#;
    let err = Scenario::parse(text).unwrap_err();
    assert_eq!(err.0[0].field, "until");
}
