//! One cycle over MMR pools of 1 000 to 1 000 000 solo candidates of `[5,5]`
//! (issue 2, item 5). Ratings are drawn from the real Lichess ratings in
//! `data/lichess/lichess-games.csv` of the repository (falling back to a normal
//! distribution with its mean and deviation if the file is absent); waits are spread
//! uniformly over 0-60 s.
//!
//! `cargo bench -p matchplane-matchmaker --bench cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{
    run_cycle, Algorithm, GameModeConfig, Parties, Search, TeamAssignment,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

fn real_ratings() -> Vec<f64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/lichess/lichess-games.csv");
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut out = Vec::new();
    for record in reader.records().flatten() {
        for col in [10, 12] {
            if let Some(v) = record.get(col).and_then(|v| v.parse().ok()) {
                out.push(v);
            }
        }
    }
    out
}

fn pool(n: usize, ratings: &[f64], rng: &mut ChaCha8Rng) -> Vec<Search> {
    (0..n)
        .map(|i| {
            let mmr = if ratings.is_empty() {
                // Box-Muller around the data's mean 1590 and deviation 290.
                let (u1, u2): (f64, f64) = (rng.gen_range(1e-9..1.0), rng.gen());
                1590.0 + 290.0 * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            } else {
                ratings[rng.gen_range(0..ratings.len())]
            };
            Search::solo(
                format!("tkt_{i}"),
                format!("p{i}"),
                mmr.clamp(0.0, 3000.0),
                -rng.gen_range(0.0..60.0),
            )
        })
        .collect()
}

fn config() -> GameModeConfig {
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
        regions: None,
    }
}

fn bench_cycle(c: &mut Criterion) {
    let ratings = real_ratings();
    let config = config();
    let mut group = c.benchmark_group("mmr_cycle_5v5");
    group.sample_size(10);
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let searches = pool(n, &ratings, &mut rng);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &searches, |b, searches| {
            b.iter(|| run_cycle(&config, searches, 0.0, &mut rng))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_cycle);
criterion_main!(benches);
