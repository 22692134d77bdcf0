//! `simulate` over a burst: 100 000 solo arrivals within 20 s into a
//! `[5,5]` MMR mode with `acceptance` (10 s to answer, everyone
//! accepting), a tolerance of 1 widening by 1 a second, so that tens of
//! thousands wait at once and thousands of proposals are open. Ratings are
//! a normal draw around the real Lichess ratings' mean and deviation
//! (1590, 290): continuous values, fewer of them within a tolerance than
//! of the real ratings, which repeat. The same arrivals without
//! `acceptance` run beside it, in the same run, so the figure is read as
//! the ratio of the two (docs/performance.md): what holding proposals adds
//! to a run.
//!
//! `cargo bench -p matchplane-matchmaker --bench simulate_burst`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::simulate::{run, Scenario};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

mod support;

/// Arrivals in the burst.
const ARRIVALS: usize = 100_000;

/// The burst's scenario, with `acceptance` or without.
fn scenario(acceptance: bool) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(ARRIVALS as u64);
    // The benchmarks' solo pool (a normal draw: no ratings given), queued
    // 0-20 s before time 0: each search arrives that long after the start.
    let mut arrivals: Vec<(f64, serde_json::Value)> =
        support::solo_pool(ARRIVALS, &[], 20.0, &mut rng)
            .into_iter()
            .map(|s| {
                let at = -s.queued_at;
                (
                    at,
                    json!({"at": at, "playerId": s.player_id.as_str(), "mmr": s.mmr}),
                )
            })
            .collect();
    arrivals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let arrivals: Vec<serde_json::Value> = arrivals.into_iter().map(|(_, a)| a).collect();
    let mut mode = json!({
        "name": "burst", "matchShape": [5, 5], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 1, "expansionMultiplier": 1},
        "ticketTtlSeconds": 600
    });
    if acceptance {
        mode["acceptance"] = json!({"timeoutSeconds": 10, "declineCooldownSeconds": 30});
    }
    let text = json!({
        "gameMode": mode, "tier": "enterprise", "seed": 1, "until": 60,
        "arrivals": arrivals
    });
    match Scenario::parse(&text.to_string()) {
        Ok(s) => s,
        Err(e) => panic!("the burst scenario is valid: {e:?}"),
    }
}

fn bench_simulate(c: &mut Criterion) {
    let plain = scenario(false);
    let accepting = scenario(true);
    for (name, s) in [("plain", &plain), ("acceptance", &accepting)] {
        let report = run(s);
        eprintln!("{name}: {} matches", report.matches.len());
    }
    let mut group = c.benchmark_group("simulate_burst_100k");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(ARRIVALS as u64));
    for (name, s) in [("plain", &plain), ("acceptance", &accepting)] {
        group.bench_with_input(BenchmarkId::from_parameter(name), s, |b, s| {
            b.iter(|| run(s))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_simulate);
criterion_main!(benches);
