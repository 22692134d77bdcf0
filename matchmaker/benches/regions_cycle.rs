//! One cycle over 100 000 solo candidates of `[5,5]` MMR, with a `regions`
//! block over 8 regions and without it, in the same run (issue 17's goal:
//! within 2x). Ratings are the real Lichess ratings of
//! `data/lichess/lichess-games.csv` (a normal draw if the file is absent);
//! waits are spread over 0-60 s; each player has a home region at
//! 20-60 ms and the others 60-150 ms more, 5 % missing one region.
//!
//! After criterion's two figures, the bench times the two cycles
//! alternately (one of each per round, 15 rounds) and prints the median of
//! each and their ratio: a machine whose load drifts during the run moves
//! both sides alike.
//!
//! `cargo bench -p matchplane-matchmaker --bench regions_cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{
    run_cycle, Algorithm, GameModeConfig, LatencyStep, Parties, Regions, Search, TeamAssignment,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod support;

const REGIONS: [&str; 8] = [
    "ap-east",
    "ap-south",
    "eu-central",
    "eu-west",
    "sa-east",
    "us-central",
    "us-east",
    "us-west",
];

fn pool(n: usize, ratings: &[f64], rng: &mut ChaCha8Rng) -> Vec<Search> {
    (0..n)
        .map(|i| {
            let mmr = support::rating(ratings, rng);
            let mut s = Search::solo(
                format!("tkt_{i}"),
                format!("p{i}"),
                mmr,
                -rng.gen_range(0.0..60.0),
            );
            let home = rng.gen_range(0..REGIONS.len());
            let base: f64 = rng.gen_range(20.0..60.0);
            let missing = (rng.gen::<f64>() < 0.05).then(|| (home + 1) % REGIONS.len());
            s.latencies = Some(
                REGIONS
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| Some(*k) != missing)
                    .map(|(k, r)| {
                        let v = if k == home {
                            base
                        } else {
                            base + rng.gen_range(60.0..150.0)
                        };
                        ((*r).into(), v.round())
                    })
                    .collect(),
            );
            s
        })
        .collect()
}

fn config(regions: bool) -> GameModeConfig {
    GameModeConfig {
        name: "bench".into(),
        enabled: true,
        match_shape: vec![5, 5].into(),
        matchmaking_cycle_duration_seconds: 1.0,
        algorithm: Algorithm::Mmr {
            min_mmr: 0.0,
            max_mmr: 3000.0,
            base_tolerance: 5.0,
            expansion_multiplier: 2.0,
            max_tolerance: None,
        },
        team_assignment: TeamAssignment::Balanced,
        parties: Parties::default(),
        ticket_ttl_seconds: 600,
        webhook: None,
        ratings: None,
        relaxations: Vec::new(),
        bots: None,
        regions: regions.then(|| Regions {
            names: None,
            max_latency_ms: 60.0,
            expansion: vec![LatencyStep {
                after_seconds: 20.0,
                max_latency_ms: 100.0,
            }],
        }),
        acceptance: None,
        assignment: None,
        backfill: None,
        recording: None,
        attributes: None,
        rules: Vec::new(),
        composition: None,
    }
}

fn bench_regions(c: &mut Criterion) {
    let ratings = support::real_ratings();
    let n = 100_000;
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let searches = pool(n, &ratings, &mut rng);
    let mut group = c.benchmark_group("mmr_cycle_5v5_100k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    for (name, regions) in [("without_regions", false), ("8_regions", true)] {
        let config = config(regions);
        group.bench_with_input(
            BenchmarkId::from_parameter(name),
            &searches,
            |b, searches| b.iter(|| run_cycle(&config, searches, 0.0, &mut rng)),
        );
    }
    group.finish();

    // The goal's ratio, alternating the two cycles round by round.
    let sides = [config(false), config(true)];
    let [a, b] = support::alternating_medians(15, |side| {
        std::hint::black_box(run_cycle(&sides[side], &searches, 0.0, &mut rng));
    });
    println!(
        "alternating, 15 rounds: without regions {a:.1} ms, 8 regions {b:.1} ms, ratio {:.2} (goal <= 2)",
        b / a
    );
}

criterion_group!(benches, bench_regions);
criterion_main!(benches);
