//! One cycle over 100 000 solo candidates of a `[5,5]` MMR mode with
//! backfill on, serving 1 000 open backfills (running matches of real
//! ratings, each with one or two open seats, opened 0-120 s ago), against
//! the same cycle with no backfill open, in the same run. Ratings are the
//! real Lichess ratings of `data/lichess/lichess-games.csv`; waits spread
//! over 0-60 s.
//!
//! The figure is read as the ratio of the two (docs/performance.md): the
//! cost the fill pass adds to a cycle. Before criterion's group it also
//! runs the two alternately (15 rounds) and prints the medians and the
//! ratio, which a machine whose load drifts moves alike.
//!
//! `cargo bench -p matchplane-matchmaker --bench backfill_cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{
    run_cycle_with_backfills, BackfillConfig, GameModeConfig, OpenBackfill, Search,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "../tests/common.rs"]
mod common;
mod support;

/// Open backfills this benchmark serves in one cycle.
const BACKFILLS: usize = 1_000;

/// `count` running `[5,5]` matches, each missing one or two players of one
/// team, their rosters' mean MMR drawn from `ratings`.
fn open_backfills(count: usize, ratings: &[f64], rng: &mut ChaCha8Rng) -> Vec<OpenBackfill> {
    (0..count)
        .map(|i| {
            let mean = support::rating(ratings, rng);
            let missing = rng.gen_range(1..=2);
            let open_seats = if rng.gen_bool(0.5) {
                vec![missing, 0]
            } else {
                vec![0, missing]
            };
            let opened_at = -rng.gen_range(0.0..120.0);
            OpenBackfill {
                backfill_id: format!("bf_{i}").into(),
                match_id: format!("mat_{i}").into(),
                revision: 1,
                open_seats,
                opened_at,
                expires_at: opened_at + 600.0,
                mean_mmr: Some(mean),
                pings: Vec::new(),
                region: None,
                roster: Default::default(),
                open_roles: Vec::new(),
            }
        })
        .collect()
}

fn bench_backfill(c: &mut Criterion) {
    let ratings = support::real_ratings();
    let mut config: GameModeConfig = common::mmr_mode(&[5, 5], 5.0, 2.0);
    config.backfill = Some(BackfillConfig::default());
    let n = 100_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
    let pool: Vec<Search> = support::solo_pool(n, &ratings, 60.0, &mut rng);
    let backfills = open_backfills(BACKFILLS, &ratings, &mut rng);
    let none: Vec<OpenBackfill> = Vec::new();
    let filled = run_cycle_with_backfills(&config, &pool, &backfills, 0.0, &mut rng);
    let seats: usize = filled
        .fills
        .iter()
        .flat_map(|f| &f.teams)
        .map(|t| t.players.len())
        .sum();
    eprintln!(
        "{} of {BACKFILLS} backfills filled with {seats} players; {} new matches",
        filled.fills.len(),
        filled.cycle.matches.len()
    );
    let mut group = c.benchmark_group("backfill_cycle_5v5_100k");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    for (name, open) in [("no_backfills", &none), ("backfills_1000", &backfills)] {
        group.bench_with_input(BenchmarkId::from_parameter(name), open, |b, open| {
            b.iter(|| run_cycle_with_backfills(&config, &pool, open, 0.0, &mut rng))
        });
    }
    group.finish();

    // The ratio, alternating the two cycles round by round.
    let sides = [&none, &backfills];
    let [a, b] = support::alternating_medians(15, |side| {
        let open = sides[side];
        std::hint::black_box(run_cycle_with_backfills(
            &config, &pool, open, 0.0, &mut rng,
        ));
    });
    println!(
        "alternating, 15 rounds: no backfills {a:.1} ms, {BACKFILLS} backfills {b:.1} ms ({:.2}x)",
        b / a
    );
}

criterion_group!(benches, bench_backfill);
criterion_main!(benches);
