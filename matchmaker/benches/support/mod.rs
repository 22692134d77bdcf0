//! What the matching-core benchmarks share: solo candidates with the real
//! Lichess ratings of `data/lichess/lichess-games.csv` (a normal draw
//! around that data's mean 1590 and deviation 290 if the file is absent),
//! and the alternating timing their ratios are read from. Each benchmark
//! uses some of these.
#![allow(dead_code)]

use matchplane_matchmaker::Search;

/// The product binary's allocator (`src/main.rs`), so that the core is
/// measured on the allocator it runs on.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// Every white and black rating of the repository's real games, or nothing
/// when the file is absent.
pub fn real_ratings() -> Vec<f64> {
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

/// One rating drawn from `ratings`, or, when there are none, from a normal
/// draw around the data's mean 1590 and deviation 290.
pub fn rating(ratings: &[f64], rng: &mut ChaCha8Rng) -> f64 {
    if ratings.is_empty() {
        // Box-Muller.
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-9..1.0), rng.gen());
        1590.0 + 290.0 * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    } else {
        ratings[rng.gen_range(0..ratings.len())]
    }
}

/// `n` solo searches rated from `ratings` (clamped to 0..=3000), queued
/// uniformly 0 to `max_wait` seconds before time 0.
pub fn solo_pool(n: usize, ratings: &[f64], max_wait: f64, rng: &mut ChaCha8Rng) -> Vec<Search> {
    (0..n)
        .map(|i| {
            let mmr = rating(ratings, rng);
            Search::solo(
                format!("tkt_{i}"),
                format!("p{i}"),
                mmr.clamp(0.0, 3000.0),
                -rng.gen_range(0.0..max_wait),
            )
        })
        .collect()
}

/// Times `N` runs alternately, one of each per round for `rounds` rounds
/// (`run(side)` runs side `side`), and returns each side's median
/// (milliseconds): a machine whose load drifts during the rounds moves
/// every side alike, so their ratios hold. A benchmark reads the clock;
/// the core it measures never does.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
pub fn alternating_medians<const N: usize>(rounds: usize, mut run: impl FnMut(usize)) -> [f64; N] {
    let mut times: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(rounds));
    for _ in 0..rounds {
        for (side, times) in times.iter_mut().enumerate() {
            let started = std::time::Instant::now();
            run(side);
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    times.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    })
}
