//! The backfill figures (docs/backfill.md): the real rated games replayed
//! as `[5,5]` MMR matches (real ratings, 10 arrivals a second), 5 % of the
//! players leaving 60-300 s after they arrived (matches form within seconds
//! at that rate, so this is 60-300 s into their match), backfill on
//! (`ttlSeconds` 120). Prints the share of open seats filled, time to fill
//! and the MMR distance of fills to their match's mean beside the distance
//! of ordinary matches' players to theirs.
//!
//!   cargo run -p matchplane-matchmaker --release --example backfill_goals -- \
//!       /work/shared/data/lichess-games.csv
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::{lichess_arrivals, render_table, run, Event, Scenario};
use rand::{Rng, SeedableRng};

const MODE: &str = r#"{"name": "ranked", "matchShape": [5, 5],
  "matchmakingCycleDurationSeconds": 2,
  "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
  "backfill": {"enabled": true, "ttlSeconds": 120},
  "ticketTtlSeconds": 600}"#;

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/work/shared/data/lichess-games.csv".into());
    let text = std::fs::read_to_string(&path).expect("the games CSV");
    let replay = lichess_arrivals(&text, usize::MAX, 10.0).expect("readable games");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut events = replay.events.clone();
    let mut leaves = 0;
    for e in &replay.events {
        if let Event::Arrival { at, player_id, .. } = e {
            if rng.gen_bool(0.05) {
                leaves += 1;
                events.push(Event::Leave {
                    at: at + rng.gen_range(60.0..=300.0),
                    players: vec![player_id.clone()],
                });
            }
        }
    }
    events.sort_by(|a, b| a.at().total_cmp(&b.at()));
    let last = events.last().map_or(0.0, Event::at);
    let json = format!(
        r#"{{"gameMode": {MODE}, "until": {}, "seed": 7}}"#,
        last + 130.0
    );
    let mut scenario = Scenario::parse(&json).unwrap();
    scenario.events = events;
    let report = run(&scenario);
    let b = report.stats.backfill.clone().expect("backfills opened");
    println!(
        "arrivals {}  leave events {leaves}  matches {}",
        replay.events.len(),
        report.stats.matches
    );
    println!(
        "seats opened {}  filled {}  share {:.1} %  backfills {}  fills {}",
        b.seats_opened,
        b.seats_filled,
        100.0 * b.seats_filled as f64 / b.seats_opened.max(1) as f64,
        b.backfills,
        b.fills
    );
    println!(
        "time to fill p50 {:?} p90 {:?} max {:?}",
        b.time_to_fill.p50, b.time_to_fill.p90, b.time_to_fill.max
    );
    println!(
        "MMR distance to the match mean: fills p50 {:?} p90 {:?}; ordinary matches p50 {:?} p90 {:?}",
        b.fill_mmr_distance.p50,
        b.fill_mmr_distance.p90,
        b.match_mmr_distance.p50,
        b.match_mmr_distance.p90
    );
    let table = render_table(&report, 0);
    println!("{}", table.lines().take(8).collect::<Vec<_>>().join("\n"));
}
