//! The regions figures (docs/regions.md): one population, two modes run
//! by the simulator: `[5,5]` MMR with `regions` (60 ms, 100 ms from 20 s)
//! and the Ping-only model (`maxDelta` 50 on the round trip to the API).
//!
//!   scripts/regions_population.py > /tmp/regions-population.csv
//!   cargo run -p matchplane-matchmaker --release --example regions_goals -- /tmp/regions-population.csv
//!
//! For the Ping-only model, whose matches have no region, each match is
//! credited with the best region its players could have had (the lowest
//! worst-member latency): the comparison is generous to it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{parse_arrivals_csv, run, Event, Scenario};
use matchplane_matchmaker::Latencies;
use std::collections::HashMap;

const REGIONS_MODE: &str = r#"{"name": "ranked", "matchShape": [5, 5],
  "matchmakingCycleDurationSeconds": 2,
  "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
  "regions": {"maxLatencyMs": 60, "expansion": [{"afterSeconds": 20, "maxLatencyMs": 100}]},
  "ticketTtlSeconds": 600}"#;
const PING_MODE: &str = r#"{"name": "ranked", "matchShape": [5, 5],
  "matchmakingCycleDurationSeconds": 2,
  "algorithm": {"type": "ping", "maxDelta": 50},
  "ticketTtlSeconds": 600}"#;

fn best(l: &Latencies) -> &str {
    l.iter()
        .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(b.0)))
        .map(|(n, _)| n.as_str())
        .unwrap()
}

fn pct(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

fn figures(mode: &str, csv: &str) -> serde_json::Value {
    let json = format!(r#"{{"gameMode": {mode}, "until": 1100, "seed": 7}}"#);
    let mut scenario = Scenario::parse(&json).unwrap();
    let events = parse_arrivals_csv(csv, scenario.game_mode.regions.as_ref()).unwrap();
    let arrivals = events.len();
    let lat: HashMap<String, Latencies> = events
        .iter()
        .filter_map(|e| match e {
            Event::Arrival {
                player_id,
                latencies,
                ..
            } => Some((player_id.clone(), latencies.clone()?)),
            Event::Cancel { .. } | Event::Leave { .. } | Event::Hold { .. } => None,
        })
        .collect();
    scenario.add_events(events, "arrivalsCsv").unwrap();
    let report = run(&scenario);
    let (mut in_best, mut seated, mut worst) = (0usize, 0usize, Vec::new());
    for m in &report.matches {
        let ids: Vec<&str> = m
            .players
            .iter()
            .filter_map(|p| p.player_id.as_deref())
            .collect();
        let region = m.region.clone().unwrap_or_else(|| {
            // The best region the group could have had.
            let names = ["eu-west", "us-east", "ap-south", "sa-east"];
            names
                .iter()
                .min_by(|a, b| {
                    let w = |r: &str| {
                        ids.iter()
                            .map(|id| lat[*id].get(r).copied().unwrap_or(f64::INFINITY))
                            .fold(0.0, f64::max)
                    };
                    w(a).total_cmp(&w(b))
                })
                .unwrap()
                .to_string()
        });
        let w = ids
            .iter()
            .map(|id| {
                lat[*id]
                    .get(region.as_str())
                    .copied()
                    .unwrap_or(f64::INFINITY)
            })
            .fold(0.0, f64::max);
        worst.push(w);
        for id in ids {
            seated += 1;
            if best(&lat[id]) == region {
                in_best += 1;
            }
        }
    }
    let w = &report.stats.wait_seconds;
    serde_json::json!({
        "matchedShare": report.stats.matched_players as f64 / arrivals as f64,
        "matches": report.stats.matches,
        "waitP50": w.p50, "waitP90": w.p90,
        "inBestRegionShare": in_best as f64 / seated.max(1) as f64,
        "worstLatencyP50": pct(worst.clone(), 0.5),
        "worstLatencyP90": pct(worst, 0.9),
    })
}

fn main() {
    let path = std::env::args().nth(1).expect("the population CSV");
    let csv = std::fs::read_to_string(path).unwrap();
    let out = serde_json::json!({
        "regions": figures(REGIONS_MODE, &csv),
        "pingOnly": figures(PING_MODE, &csv),
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
}
