//! One cycle over MMR pools of 1 000 to 1 000 000 solo candidates of `[5,5]`
//! (issue 2, item 5). Ratings are drawn from the real Lichess ratings in
//! `data/lichess/lichess-games.csv` of the repository (falling back to a normal
//! distribution with its mean and deviation if the file is absent); waits are spread
//! uniformly over 0-60 s.
//!
//! `cargo bench -p matchplane-matchmaker --bench cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::run_cycle;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[path = "../tests/common.rs"]
mod common;
mod support;

fn bench_cycle(c: &mut Criterion) {
    let ratings = support::real_ratings();
    let config = common::mmr_mode(&[5, 5], 5.0, 2.0);
    let mut group = c.benchmark_group("mmr_cycle_5v5");
    group.sample_size(10);
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let searches = support::solo_pool(n, &ratings, 60.0, &mut rng);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &searches, |b, searches| {
            b.iter(|| run_cycle(&config, searches, 0.0, &mut rng))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_cycle);
criterion_main!(benches);
