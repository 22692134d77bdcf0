//! One cycle over 100 000 solo `[5,5]` candidates with the thin-pool
//! blocks (relaxations to `[4,4]` after 20 s and `[3,3]` after 40 s, bots
//! after 60 s) against the same pool without them, in the same run.
//! Ratings from `data/lichess/lichess-games.csv` (a normal distribution with
//! its mean and deviation if the file is absent); waits uniform over 0-90 s,
//! so every pass has anchors old enough for it.
//!
//! `cargo bench -p matchplane-matchmaker --bench thin_cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{run_cycle, Algorithm, Bots, GameModeConfig, Relaxation};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[path = "../tests/common.rs"]
mod common;
mod support;

/// A fixed 1 % window, so the later passes have work.
fn plain() -> GameModeConfig {
    common::mmr_mode(&[5, 5], 1.0, 1.0)
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
    let ratings = support::real_ratings();
    let n = 100_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
    let searches = support::solo_pool(n, &ratings, 90.0, &mut rng);
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
