//! One cycle over MMR pools of 1 000 to 1 000 000 solo candidates of `[5,5]`
//! (issue 2, item 5). Ratings are drawn from the real Lichess ratings in
//! `data/lichess/lichess-games.csv` of the repository (falling back to a normal
//! distribution with its mean and deviation if the file is absent); waits are spread
//! uniformly over 0-60 s.
//!
//! Beside it, `cycle_floor` measures on the same pools the least any cycle
//! does: sort the pool by wait (docs/game-modes.md#how-a-cycle-forms-matches's anchor order) and read every
//! search once in that order. The cycle's growth from one size to the next
//! is read against the floor's in the same run (`docs/performance.md`): on a
//! machine whose caches hold 10 000 searches but not 100 000, the floor
//! itself grows far more than tenfold over that step.
//!
//! `cargo bench -p matchplane-matchmaker --bench cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{run_cycle, Search};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[path = "../tests/common.rs"]
mod common;
mod support;

/// For each size, the cycle then the floor on the same pool, so that both
/// see the machine at about the same moment.
fn bench_cycle(c: &mut Criterion) {
    let ratings = support::real_ratings();
    let config = common::mmr_mode(&[5, 5], 5.0, 2.0);
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let searches = support::solo_pool(n, &ratings, 60.0, &mut rng);
        let mut group = c.benchmark_group("mmr_cycle_5v5");
        group
            .sample_size(10)
            .throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &searches, |b, searches| {
            b.iter(|| run_cycle(&config, searches, 0.0, &mut rng))
        });
        group.finish();
        let mut group = c.benchmark_group("cycle_floor");
        group
            .sample_size(10)
            .throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &searches, |b, searches| {
            b.iter(|| floor(searches))
        });
        group.finish();
    }
}

/// The least a cycle does: order the pool by wait, then read every search
/// (its MMR and its ticket id) once in that order.
fn floor(searches: &[Search]) -> f64 {
    let mut keys: Vec<(u64, usize)> = searches
        .iter()
        .enumerate()
        .map(|(i, s)| (s.queued_at.to_bits(), i))
        .collect();
    // Every `queuedAt` is negative here: their bits sort in reverse, which
    // costs the sort the same.
    keys.sort_unstable();
    keys.iter()
        .map(|&(_, i)| searches[i].mmr.unwrap_or(0.0) + searches[i].ticket_id.len() as f64)
        .sum()
}

criterion_group!(benches, bench_cycle);
criterion_main!(benches);
