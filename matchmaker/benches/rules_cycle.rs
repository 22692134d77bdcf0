//! One cycle over 100 000 solo candidates of a `[5,5]` MMR mode with the
//! five rules of docs/rules.md (two builds, a three-map vote, levels 1-100
//! within 10 widening to 40, block lists of 0-5 players), beside the same
//! pool without rules, in the same run; and the same rules with 20 builds
//! (many small partitions) against 2. Ratings are the real Lichess ratings
//! of `data/lichess/lichess-games.csv`; waits spread over 0-60 s.
//!
//! The figures are read as ratios (`rules / plain`, `20 builds / 2 builds`)
//! of one run: see docs/performance.md. Before criterion's groups it also
//! runs the three cycles alternately (one of each per round, 15 rounds)
//! and prints the median of each and the ratios: a machine whose load
//! drifts during the run moves all three alike.
//!
//! `cargo bench -p matchplane-matchmaker --bench rules_cycle`
//!
//! For a profiler: `RULES_PROFILE=plain|2|20` runs only that cycle, over
//! and over for 20 s (`RULES_CYCLES=n`: exactly n times, for an instruction
//! counter); `RULES_DIGEST=1` beside it prints a digest of the
//! cycle's outcome, which a change meant only to be faster must leave as
//! it was.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{run_cycle, GameModeConfig, Search};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "../tests/common.rs"]
mod common;
mod support;

/// Gives every search of `pool` the five attributes, its build one of
/// `builds`.
fn with_attributes(pool: &[Search], builds: usize, rng: &mut ChaCha8Rng) -> Vec<Search> {
    const MAPS: [&str; 3] = ["dust", "inferno", "nuke"];
    let n = pool.len();
    pool.iter()
        .map(|s| {
            let mut s = s.clone();
            let maps: Vec<&str> = MAPS.iter().copied().filter(|_| rng.gen_bool(0.6)).collect();
            let maps = if maps.is_empty() { vec!["dust"] } else { maps };
            let blocked: Vec<String> = (0..rng.gen_range(0..=5))
                .map(|_| format!("p{}", rng.gen_range(0..n)))
                .collect();
            s.attributes = serde_json::from_value(serde_json::json!({
                "build": format!("1.{}", rng.gen_range(0..builds)),
                "maps": maps,
                "level": rng.gen_range(1..=100),
                "blocked": blocked,
            }))
            .unwrap_or_default();
            s
        })
        .collect()
}

fn bench_rules(c: &mut Criterion) {
    let ratings = support::real_ratings();
    let plain_config = common::mmr_mode(&[5, 5], 5.0, 2.0);
    let config = common::ruled(&[5, 5]);
    let n = 100_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
    let plain = support::solo_pool(n, &ratings, 60.0, &mut rng);
    let two = with_attributes(&plain, 2, &mut rng);
    let twenty = with_attributes(&plain, 20, &mut rng);
    // RULES_PROFILE=plain|2|20: only that cycle, over and over for 20 s,
    // for a profiler (`perf record`) to read; with RULES_DIGEST=1 also a
    // digest of its outcome (matches, waiting reasons, `ruleTurnedAway`),
    // which a change meant only to be faster leaves as it was.
    if let Ok(which) = std::env::var("RULES_PROFILE") {
        let (cfg, pool) = match which.as_str() {
            "plain" => (&plain_config, &plain),
            "20" => (&config, &twenty),
            _ => (&config, &two),
        };
        profile(&which, cfg, pool, &mut rng);
        return;
    }
    let mut group = c.benchmark_group("rules_cycle_5v5_100k");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    for (name, cfg, pool) in [
        ("plain", &plain_config, &plain),
        ("rules_2_builds", &config, &two),
        ("rules_20_builds", &config, &twenty),
    ] {
        let matched: usize = run_cycle(cfg, pool, 0.0, &mut rng).matches.len() * 10;
        eprintln!("{name}: {matched} of {n} matched in one cycle");
        group.bench_with_input(BenchmarkId::from_parameter(name), pool, |b, pool| {
            b.iter(|| run_cycle(cfg, pool, 0.0, &mut rng))
        });
    }
    group.finish();

    // The goal's ratios, alternating the three cycles round by round.
    let sides = [(&plain_config, &plain), (&config, &two), (&config, &twenty)];
    let [a, b, c] = support::alternating_medians(15, |side| {
        let (cfg, pool) = sides[side];
        std::hint::black_box(run_cycle(cfg, pool, 0.0, &mut rng));
    });
    println!(
        "alternating, 15 rounds: no rules {a:.1} ms, 2 builds {b:.1} ms ({:.2}x, goal <= 1.5), 20 builds {c:.1} ms ({:.2}x; {:.2} of 2 builds, goal <= 1)",
        b / a,
        c / a,
        c / b
    );
}

/// The profiling loop of `RULES_PROFILE` (see [`bench_rules`]).
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
fn profile(which: &str, config: &GameModeConfig, pool: &[Search], rng: &mut ChaCha8Rng) {
    use std::hash::{Hash, Hasher};
    // RULES_CYCLES=n: exactly n cycles (for an instruction counter such as
    // callgrind, whose figures do not drift with the machine's load).
    let exact: Option<u32> = std::env::var("RULES_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok());
    let started = std::time::Instant::now();
    let mut cycles = 0u32;
    while exact.map_or(started.elapsed().as_secs() < 20, |n| cycles < n) {
        std::hint::black_box(run_cycle(config, pool, 0.0, rng));
        cycles += 1;
    }
    let ms = started.elapsed().as_secs_f64() * 1000.0 / f64::from(cycles);
    println!("{which}: {cycles} cycles, {ms:.1} ms each");
    if std::env::var_os("RULES_DIGEST").is_some() {
        let outcome = run_cycle(config, pool, 0.0, &mut ChaCha8Rng::seed_from_u64(7));
        let json = serde_json::to_string(&outcome).unwrap_or_default();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        json.hash(&mut h);
        println!("outcome digest {:016x} ({} bytes)", h.finish(), json.len());
    }
}

criterion_group!(benches, bench_rules);
criterion_main!(benches);
