//! The engine's budget and its skipping of idle cycles.

#![allow(clippy::unwrap_used)]
use super::*;
use serde_json::json;

const SCENARIO: &str = r#"{"gameMode": {"name": "duel", "matchShape": [1, 1],
    "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}},
    "tier": "pro", "seed": 7, "until": 10,
    "arrivals": [{"at": 0, "playerId": "a", "mmr": 1500}, {"at": 0, "playerId": "b", "mmr": 1510},
                 {"at": 0, "playerId": "c", "mmr": 2900}]}"#;

#[test]
fn a_budget_that_runs_out_stops_the_run_and_one_that_does_not_changes_nothing() {
    let scenario = Scenario::parse(SCENARIO).unwrap();
    let mut cycles = 0;
    let stopped = run_bounded(&scenario, &mut || {
        cycles += 1;
        cycles <= 3
    });
    assert_eq!(stopped.unwrap_err(), Stopped { at: 3.0 });
    let whole = run_bounded(&scenario, &mut || true).unwrap();
    assert_eq!(
        serde_json::to_string(&whole).unwrap(),
        serde_json::to_string(&run(&scenario)).unwrap()
    );
}

/// A duel with `until` `until` and the given events.
fn duel(step: f64, until: f64, arrivals: serde_json::Value) -> Scenario {
    let text = json!({"gameMode": {"name": "duel", "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": step, "ticketTtlSeconds": 60,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}},
        "tier": "enterprise", "seed": 7, "until": until, "arrivals": arrivals});
    Scenario::parse(&text.to_string()).unwrap()
}

/// Cycles asked for by a run of `scenario`.
fn cycles_of(scenario: &Scenario) -> usize {
    let mut cycles = 0;
    run_bounded(scenario, &mut || {
        cycles += 1;
        true
    })
    .unwrap();
    cycles
}

#[test]
fn a_week_with_two_busy_minutes_runs_the_cycles_of_those_minutes() {
    // A replay of 7 days over traffic at its start and end.
    let week = 7.0 * 86_400.0;
    let scenario = duel(
        1.0,
        week,
        json!([{"at": 0.25, "playerId": "a", "mmr": 1500},
               {"at": 3.5, "playerId": "b", "mmr": 1600},
               {"at": 600_000.7, "playerId": "c", "mmr": 1500},
               {"at": 600_001, "playerId": "d", "mmr": 1510}]),
    );
    let cycles = cycles_of(&scenario);
    assert!(cycles < 200, "{cycles} cycles run");
    let report = run(&scenario);
    let at: Vec<f64> = report.matches.iter().map(|m| m.at).collect();
    assert_eq!(at, [4.0, 600_001.0]);
    assert_eq!(report, run_inner(&scenario, &mut || true, false).0);
}

/// One pseudo-random scenario of `kind` (a duel, a FIFO mode of parties,
/// a mode with acceptance, one with backfill, holds and cancels): bursts of
/// arrivals separated by long empty stretches, at times off the cycle grid.
fn bursty(kind: u64, seed: u64) -> Scenario {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = move |n: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % n
    };
    let step = [1.0, 0.7, 2.5][(seed % 3) as usize];
    let mut mode = json!({"name": "m", "matchShape": [2, 2],
        "matchmakingCycleDurationSeconds": step, "ticketTtlSeconds": 40,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 2, "expansionMultiplier": 2}});
    match kind {
        1 => {
            mode["algorithm"] = json!({"type": "fifo"});
            mode["parties"] = json!({"allowParties": true, "maxSize": 2, "keepTogether": true,
                                     "incompleteTimeoutSeconds": 10});
        }
        2 => mode["acceptance"] = json!({"timeoutSeconds": 10, "declineCooldownSeconds": 30}),
        3 => mode["backfill"] = json!({"ttlSeconds": 30}),
        _ => {}
    }
    let mut events = Vec::new();
    let mut at = 0.0;
    let mut n = 0;
    for _ in 0..6 {
        at += (next(3000) as f64) + (next(1000) as f64) / 1000.0;
        for _ in 0..(1 + next(9)) {
            at += (next(4000) as f64) / 1000.0;
            n += 1;
            let player = format!("p{n}");
            let mut arrival = json!({"at": at, "playerId": player, "mmr": 1400 + next(300)});
            if kind == 1 && next(4) == 0 {
                let party = json!({"id": format!("duo{n}"), "members": [player, format!("q{n}")]});
                arrival["party"] = party.clone();
                events.push(arrival);
                // The second member late, or never.
                if next(2) == 0 {
                    let late = at + (next(20) as f64);
                    events.push(json!({"at": late, "playerId": format!("q{n}"), "party": party}));
                }
                continue;
            }
            if kind == 2 && next(3) == 0 {
                arrival["answer"] = json!({"accept": false, "after": 3});
            }
            events.push(arrival);
            match next(6) {
                0 => events.push(json!({"at": at + (next(30) as f64), "cancel": player})),
                1 if kind == 3 => events.push(json!({"at": at + 20.0, "leave": [player]})),
                2 if kind == 0 => events.push(json!({"at": at + 1.0, "hold": next(2) == 0})),
                _ => {}
            }
        }
    }
    if kind == 1 {
        // FIFO arrivals carry no MMR.
        for e in &mut events {
            e.as_object_mut().unwrap().remove("mmr");
        }
    }
    events.sort_by(|a, b| {
        a["at"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["at"].as_f64().unwrap())
    });
    let text = json!({"gameMode": mode, "tier": "enterprise", "seed": seed,
        "until": at + 100.0, "arrivals": events});
    Scenario::parse(&text.to_string()).unwrap()
}

#[test]
fn skipping_idle_cycles_gives_the_report_of_running_every_cycle() {
    let (mut skipped, mut matches) = (0, 0);
    for kind in 0..4 {
        for seed in 0..12 {
            let scenario = bursty(kind, seed);
            let every = run_inner(&scenario, &mut || true, false).0;
            let mut asked = 0;
            let fast = run_inner(
                &scenario,
                &mut || {
                    asked += 1;
                    true
                },
                true,
            )
            .0;
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&every).unwrap(),
                "kind {kind} seed {seed}"
            );
            assert_eq!(fast, every, "kind {kind} seed {seed}");
            let all =
                (scenario.until / scenario.game_mode.matchmaking_cycle_duration_seconds) as usize;
            skipped += all.saturating_sub(asked);
            matches += every.matches.len();
        }
    }
    assert!(skipped > 100_000, "only {skipped} cycles skipped");
    assert!(matches > 100, "only {matches} matches made");
}

#[test]
fn an_event_past_every_cycle_is_never_reached_and_never_overflows() {
    for at in [1e300, f64::MAX, f64::INFINITY, 4.6e18] {
        assert_eq!(first_cycle_at_or_after(at, 1.0), u64::MAX, "{at}");
    }
    assert_eq!(first_cycle_at_or_after(1e15, 1.0), 1_000_000_000_000_000);
}

#[test]
fn the_first_cycle_of_an_event_is_the_one_the_loop_applies_it_in() {
    for step in [0.1, 0.3, 0.7, 1.0, 2.5, 3.0] {
        for i in 0..2000 {
            let at = f64::from(i) * 0.05;
            let k = first_cycle_at_or_after(at, step);
            assert!(k as f64 * step >= at, "step {step} at {at}: {k}");
            assert!(
                k == 1 || ((k - 1) as f64 * step) < at,
                "step {step} at {at}: {k}"
            );
        }
    }
}
