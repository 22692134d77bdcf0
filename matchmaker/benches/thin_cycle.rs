//! One cycle over 100 000 solo `[5,5]` candidates with the thin-pool
//! blocks (relaxations to `[4,4]` after 20 s and `[3,3]` after 40 s, bots
//! after 60 s) against the same pool without them, in the same run.
//! Ratings from `data/lichess/lichess-games.csv` (a normal distribution with
//! its mean and deviation if the file is absent); waits uniform over 0-90 s,
//! so every pass has anchors old enough for it.
//!
//! `cargo bench -p matchplane-matchmaker --bench thin_cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{
    run_cycle, Algorithm, Bots, GameModeConfig, Parties, Relaxation, Search, TeamAssignment,
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
                let (u1, u2): (f64, f64) = (rng.gen_range(1e-9..1.0), rng.gen());
                1590.0 + 290.0 * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            } else {
                ratings[rng.gen_range(0..ratings.len())]
            };
            Search::solo(
                format!("tkt_{i}"),
                format!("p{i}"),
                mmr.clamp(0.0, 3000.0),
                -rng.gen_range(0.0..90.0),
            )
        })
        .collect()
}

fn plain() -> GameModeConfig {
    GameModeConfig {
        name: "bench".into(),
        enabled: true,
        match_shape: vec![5, 5].into(),
        matchmaking_cycle_duration_seconds: 1.0,
        algorithm: Algorithm::Mmr {
            min_mmr: 0.0,
            max_mmr: 3000.0,
            base_tolerance: 1.0,
            expansion_multiplier: 1.0,
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

fn thin() -> GameModeConfig {
    let mut c = plain();
    c.relaxations = vec![
        Relaxation {
            after_seconds: 20.0,
            match_shape: vec![4, 4],
        },
        Relaxation {
            after_seconds: 40.0,
            match_shape: vec![3, 3],
        },
    ];
    c.bots = Some(Bots {
        fill_after_seconds: 60.0,
        min_humans: 2,
        replaceable: true,
    });
    if let Algorithm::Mmr { max_tolerance, .. } = &mut c.algorithm {
        *max_tolerance = Some(25.0);
    }
    c
}

fn bench_thin(c: &mut Criterion) {
    let ratings = real_ratings();
    let n = 100_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
    let searches = pool(n, &ratings, &mut rng);
    let mut group = c.benchmark_group("thin_cycle_100k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    for (name, config) in [("plain", plain()), ("relaxations_bots", thin())] {
        group.bench_with_input(
            BenchmarkId::from_parameter(name),
            &searches,
            |b, searches| b.iter(|| run_cycle(&config, searches, 0.0, &mut rng)),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_thin);
criterion_main!(benches);
