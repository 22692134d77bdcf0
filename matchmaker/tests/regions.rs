//! The region rule (docs/regions.md): latency maps and the `regions` block are
//! validated, a match is played in a region within every member's own
//! ceiling, chosen by worst latency then mean then name; waiting reasons
//! say `NO_COMMON_REGION`; a config adding `regions` fails searches without
//! a map. A property test: nobody is ever above their own ceiling.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::latency::parse_latencies;
use matchplane_matchmaker::{
    validate, Bots, Code, GameModeConfig, Latencies, LatencyStep, Regions, Search, Tier,
    WaitingReason,
};
use proptest::prelude::*;
use serde_json::json;

fn lat(pairs: &[(&str, f64)]) -> Latencies {
    pairs.iter().map(|(n, v)| ((*n).into(), *v)).collect()
}

fn with_lat(mut s: Search, pairs: &[(&str, f64)]) -> Search {
    s.latencies = Some(lat(pairs));
    s
}

fn regions(max: f64, steps: &[(f64, f64)]) -> Regions {
    Regions {
        names: None,
        max_latency_ms: max,
        expansion: steps
            .iter()
            .map(|&(after_seconds, max_latency_ms)| LatencyStep {
                after_seconds,
                max_latency_ms,
            })
            .collect(),
    }
}

fn regional(mut c: GameModeConfig, max: f64, steps: &[(f64, f64)]) -> GameModeConfig {
    c.regions = Some(regions(max, steps));
    c
}

#[test]
fn latency_maps_list_every_failure_with_its_field() {
    let errors = parse_latencies(
        &json!({"eu-west": 31, "Bad": 10, "us-east": 5001, "ap": -1, "x": "fast"}),
        None,
    )
    .unwrap_err();
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "attributes.latencies.Bad",
            "attributes.latencies.ap",
            "attributes.latencies.us-east",
            "attributes.latencies.x"
        ]
    );
    assert!(errors.iter().all(|e| e.code == Code::ValidationError));
    assert_eq!(
        parse_latencies(&json!({}), None).unwrap_err()[0].field,
        "attributes.latencies"
    );
    assert!(parse_latencies(&json!([1]), None).is_err());
    let many: serde_json::Map<String, serde_json::Value> =
        (0..33).map(|i| (format!("r{i}"), json!(1))).collect();
    assert!(parse_latencies(&serde_json::Value::Object(many), None).is_err());
    let ok = parse_latencies(&json!({"eu-west": 31, "us-east": 110.5}), None).unwrap();
    assert_eq!(ok, lat(&[("eu-west", 31.0), ("us-east", 110.5)]));
    // With `names`, another region is refused on its field.
    let mut r = regions(80.0, &[]);
    r.names = Some(vec!["eu-west".into()]);
    let e = parse_latencies(&json!({"eu-west": 31, "us-east": 40}), Some(&r)).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].field, "attributes.latencies.us-east");
}

#[test]
fn the_regions_block_is_validated_all_at_once() {
    let tier = Tier::enterprise();
    let mut c = regional(mmr_mode(&[1, 1], 5.0, 2.0), 80.0, &[(20.0, 120.0)]);
    assert!(validate(&c, &tier).is_ok());
    c.regions = Some(regions(0.0, &[(20.0, 70.0), (10.0, 90.0), (30.0, 6000.0)]));
    c.regions.as_mut().unwrap().names = Some(vec![]);
    let errors = validate(&c, &tier).unwrap_err().0;
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    for f in [
        "regions.names",
        "regions.maxLatencyMs",
        "regions.expansion[1].afterSeconds",
        "regions.expansion[2].maxLatencyMs",
    ] {
        assert!(fields.contains(&f), "{f} not in {fields:?}");
    }
    let steps: Vec<(f64, f64)> = (1..=9).map(|i| (i as f64, 80.0 + i as f64)).collect();
    c.regions = Some(regions(80.0, &steps));
    let errors = validate(&c, &tier).unwrap_err().0;
    assert_eq!(errors[0].field, "regions.expansion");
}

#[test]
fn a_match_is_played_in_the_best_region_everyone_reaches() {
    let c = regional(mmr_mode(&[1, 1], 5.0, 2.0), 80.0, &[]);
    let pool = vec![
        with_lat(
            solo("a", 1500.0, 0.0),
            &[("eu-west", 30.0), ("us-east", 70.0)],
        ),
        with_lat(
            solo("b", 1500.0, 0.0),
            &[("eu-west", 75.0), ("us-east", 40.0)],
        ),
    ];
    let out = cycle(&c, &pool, 1.0);
    assert_eq!(out.matches.len(), 1);
    let m = &out.matches[0];
    // Worst member 70 in us-east beats 75 in eu-west.
    assert_eq!(m.region.as_deref(), Some("us-east"));
    let mut lats: Vec<f64> = m
        .teams
        .iter()
        .flat_map(|t| t.players.iter().map(|p| p.latency_ms.unwrap()))
        .collect();
    lats.sort_by(f64::total_cmp);
    assert_eq!(lats, [40.0, 70.0]);
}

#[test]
fn ties_go_to_the_lowest_mean_then_the_name() {
    let c = regional(fifo_mode(&[1, 1]), 80.0, &[]);
    let pool = vec![
        with_lat(
            solo("a", 1.0, 0.0),
            &[("b-r", 50.0), ("a-r", 50.0), ("c-r", 50.0)],
        ),
        with_lat(
            solo("b", 1.0, 0.0),
            &[("b-r", 10.0), ("a-r", 20.0), ("c-r", 10.0)],
        ),
    ];
    let out = cycle(&c, &pool, 1.0);
    assert_eq!(out.matches[0].region.as_deref(), Some("b-r"));
}

#[test]
fn no_common_region_keeps_both_waiting_with_the_reason() {
    let c = regional(mmr_mode(&[1, 1], 5.0, 2.0), 60.0, &[(20.0, 100.0)]);
    let pool = vec![
        with_lat(
            solo("a", 1500.0, 0.0),
            &[("eu-west", 30.0), ("us-east", 90.0)],
        ),
        with_lat(
            solo("b", 1500.0, 0.0),
            &[("eu-west", 95.0), ("us-east", 35.0)],
        ),
    ];
    let out = cycle(&c, &pool, 1.0);
    assert!(out.matches.is_empty());
    assert_eq!(out.waiting.len(), 2);
    assert_eq!(
        out.waiting[0].reason,
        WaitingReason::NoCommonRegion {
            best_region: Some("us-east".into()),
            worst_latency_ms: Some(90.0),
            ceiling_ms: 60.0,
            // The 20 s step raises the ceiling to 100, past 90.
            unblocks_in_seconds: Some(19.0),
        }
    );
    let code = serde_json::to_value(&out.waiting[0].reason).unwrap();
    assert_eq!(code["code"], "NO_COMMON_REGION");
    assert_eq!(code["bestRegion"], "us-east");
    // At 20 s both ceilings are 100: they meet in us-east (worst 90).
    let out = cycle(&c, &pool, 20.0);
    assert_eq!(out.matches[0].region.as_deref(), Some("us-east"));
}

#[test]
fn a_newcomer_never_gets_the_waiters_widened_ceiling() {
    let c = regional(ping_mode(&[1, 1], 1000.0), 60.0, &[(20.0, 100.0)]);
    let mut old = with_lat(pinged("old", 50.0, 0.0), &[("eu-west", 30.0)]);
    old.ping_ms = Some(50.0);
    let new = with_lat(pinged("new", 50.0, 29.0), &[("eu-west", 90.0)]);
    let out = cycle(&c, &[old.clone(), new], 30.0);
    assert!(out.matches.is_empty(), "the newcomer is above its own 60");
    // A waiter may accept 90 itself.
    let old2 = with_lat(pinged("old2", 50.0, 0.0), &[("eu-west", 90.0)]);
    let out = cycle(&c, &[old, old2], 30.0);
    assert_eq!(out.matches[0].region.as_deref(), Some("eu-west"));
}

#[test]
fn a_party_uses_its_worst_member_and_a_missing_region_is_unreachable() {
    let c = regional(
        with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true),
        80.0,
        &[],
    );
    let mut duo = party("duo", 2, 1500.0, 0.0);
    duo[0].latencies = Some(lat(&[("eu-west", 20.0), ("us-east", 30.0)]));
    duo[1].latencies = Some(lat(&[("eu-west", 70.0)]));
    let pool: Vec<Search> = duo
        .into_iter()
        .chain([
            with_lat(
                solo("c", 1500.0, 0.0),
                &[("eu-west", 60.0), ("us-east", 10.0)],
            ),
            with_lat(
                solo("d", 1500.0, 0.0),
                &[("eu-west", 60.0), ("us-east", 10.0)],
            ),
        ])
        .collect();
    let out = cycle(&c, &pool, 1.0);
    // us-east is missing for duo-1: eu-west, worst 70.
    assert_eq!(out.matches[0].region.as_deref(), Some("eu-west"));
    // Each player carries their own latency there, party members too.
    let mut lats: Vec<(String, Option<f64>)> = out.matches[0]
        .teams
        .iter()
        .flat_map(|t| &t.players)
        .map(|p| (p.player_id.to_string(), p.latency_ms))
        .collect();
    lats.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<String> = lats.iter().map(|(id, _)| id.clone()).collect();
    let at = |id: &str| lats[ids.iter().position(|i| i == id).unwrap()].1;
    assert_eq!(at("c"), Some(60.0));
    assert_eq!(at("d"), Some(60.0));
    let mut duo: Vec<Option<f64>> = lats
        .iter()
        .filter(|(id, _)| id != "c" && id != "d")
        .map(|(_, l)| *l)
        .collect();
    duo.sort_by(|a, b| a.unwrap().total_cmp(&b.unwrap()));
    assert_eq!(duo, [Some(20.0), Some(70.0)], "{lats:?}");
}

#[test]
fn bots_respect_regions_too() {
    let mut c = regional(mmr_mode(&[2, 2], 5.0, 2.0), 50.0, &[]);
    c.bots = Some(Bots {
        fill_after_seconds: 10.0,
        min_humans: 2,
        replaceable: false,
    });
    let pool = vec![
        with_lat(solo("a", 1500.0, 0.0), &[("eu-west", 30.0)]),
        with_lat(solo("b", 1500.0, 0.0), &[("us-east", 30.0)]),
    ];
    assert!(cycle(&c, &pool, 30.0).matches.is_empty());
    let pool = vec![
        pool[0].clone(),
        with_lat(solo("b", 1500.0, 0.0), &[("eu-west", 45.0)]),
    ];
    assert_eq!(
        cycle(&c, &pool, 30.0).matches[0].region.as_deref(),
        Some("eu-west")
    );
}

#[test]
fn adding_regions_fails_searches_without_a_map() {
    let c = regional(mmr_mode(&[1, 1], 5.0, 2.0), 80.0, &[]);
    let pool = vec![
        solo("a", 1500.0, 0.0),
        with_lat(solo("b", 1500.0, 0.0), &[("eu-west", 30.0)]),
    ];
    let out = cycle(&c, &pool, 1.0);
    assert_eq!(out.failed.len(), 1);
    assert_eq!(out.failed[0].code, Code::LatenciesRequired);
    assert_eq!(out.failed[0].player_id.as_str(), "a");
}

const NAMES: [&str; 4] = ["ap", "eu", "sa", "us"];

fn player() -> impl Strategy<Value = (f64, f64, Vec<Option<f64>>)> {
    (
        1400.0..1600.0f64,
        0.0..60.0f64,
        proptest::collection::vec(proptest::option::weighted(0.8, 0.0..200.0f64), 4),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn nobody_is_ever_above_their_own_ceiling(
        players in proptest::collection::vec(player(), 2..40),
        algo in 0..3u8,
        now in 0.0..90.0f64,
    ) {
        let base = match algo {
            0 => mmr_mode(&[2, 2], 5.0, 2.0),
            1 => ping_mode(&[2, 2], 80.0),
            _ => fifo_mode(&[2, 2]),
        };
        let mut c = regional(base, 60.0, &[(20.0, 100.0), (40.0, 150.0)]);
        c.bots = Some(Bots { fill_after_seconds: 45.0, min_humans: 2, replaceable: true });
        c.relaxations = vec![matchplane_matchmaker::Relaxation {
            after_seconds: 30.0,
            match_shape: vec![1, 1],
        }];
        let mut pool = Vec::new();
        for (i, (mmr, at, l)) in players.iter().enumerate() {
            let mut s = solo(&format!("p{i}"), *mmr, *at);
            s.ping_ms = Some(*mmr / 20.0);
            let map: Latencies = NAMES
                .iter()
                .zip(l)
                .filter_map(|(n, v)| v.map(|v| ((*n).into(), v.round())))
                .collect();
            s.latencies = Some(if map.is_empty() { lat(&[("eu", 10.0)]) } else { map });
            pool.push(s);
        }
        let out = cycle(&c, &pool, now);
        let regions = c.regions.as_ref().unwrap();
        for m in &out.matches {
            let region = m.region.clone().expect("a region");
            for p in m.teams.iter().flat_map(|t| &t.players) {
                let s = pool.iter().find(|s| s.ticket_id == p.ticket_id).unwrap();
                let own = s.latencies.as_ref().unwrap().get(&region).copied();
                prop_assert_eq!(own, p.latency_ms);
                let ceiling = regions.ceiling(now - s.queued_at);
                prop_assert!(own.is_some_and(|v| v <= ceiling),
                    "{} at {:?} in {} above {}", p.player_id, own, region, ceiling);
            }
        }
    }
}

#[test]
fn simulate_takes_latencies_inline_and_as_csv_and_reports_the_region() {
    use matchplane_matchmaker::simulate::{parse_arrivals_csv, render_table, run, Scenario};
    let mut scenario = Scenario::parse(
        r#"{"gameMode": {"name": "duel", "matchShape": [1, 1],
              "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "fifo"},
              "regions": {"maxLatencyMs": 80}},
            "until": 3,
            "arrivals": [
              {"at": 0, "playerId": "ana", "latencies": {"eu-west": 31, "us-east": 110},
               "data": {"loadout": [1, 2]}}]}"#,
    )
    .unwrap();
    let csv = "at,playerId,latencies\n0,ben,eu-west=45|us-east=20\n";
    let events = parse_arrivals_csv(csv, scenario.game_mode.regions.as_ref()).unwrap();
    scenario.add_events(events, "arrivalsCsv").unwrap();
    let report = run(&scenario);
    assert_eq!(report.matches.len(), 1);
    let m = &report.matches[0];
    assert_eq!(m.region.as_deref(), Some("eu-west"));
    let json = serde_json::to_value(m).unwrap();
    assert_eq!(json["region"], "eu-west");
    let ana = m
        .players
        .iter()
        .find(|p| p.player_id.as_deref() == Some("ana"))
        .unwrap();
    assert_eq!(ana.latency_ms, Some(31.0));
    assert_eq!(ana.data, Some(json!({"loadout": [1, 2]})));
    assert!(render_table(&report, 10).contains("region"));
    // A bad cell and a missing map are refused, naming the field.
    assert!(parse_arrivals_csv("at,playerId,latencies\n0,c,eu-west=x\n", None).is_err());
    let err = Scenario::parse(
        r#"{"gameMode": {"name": "duel", "matchShape": [1, 1],
              "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "fifo"},
              "regions": {"maxLatencyMs": 80}},
            "until": 3, "arrivals": [{"at": 0, "playerId": "ana"},
              {"at": 0, "playerId": "ben", "latencies": {"EU": 1}}]}"#,
    )
    .unwrap_err();
    let fields: Vec<&str> = err.0.iter().map(|e| e.field.as_str()).collect();
    // Every failure at once: ana's missing map with ben's bad one.
    assert_eq!(
        fields,
        ["arrivals[0].latencies", "arrivals[1].latencies.EU"]
    );
}
