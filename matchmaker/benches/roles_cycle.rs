//! One cycle over 100 000 candidates (parties of 1-3, about 200 000
//! players) of a `[5,5]` MMR mode with role queues (docs/rules.md, "Role
//! queues": one tank, two damage, two support per team, parties kept
//! together), beside the same pool without `composition`, in the same run.
//! Each player lists tank only (15 %), damage only (45 %), support only
//! (25 %) or two of the three (15 %). Ratings are the real Lichess
//! ratings of `data/lichess/lichess-games.csv` (a normal draw if the file
//! is absent); waits are spread over 0-60 s.
//!
//! Prints, per pool, the share of players one cycle matches; the timings
//! are criterion's, read as the ratio `roles / plain` of one run.
//!
//! `cargo bench -p matchplane-matchmaker --bench roles_cycle`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use matchplane_matchmaker::{run_cycle, GameModeConfig, Party, Search};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "../tests/common.rs"]
mod common;
mod support;

const CANDIDATES: usize = 100_000;

fn roles_of(rng: &mut ChaCha8Rng) -> Vec<&'static str> {
    let draw: f64 = rng.gen();
    if draw < 0.15 {
        vec!["tank"]
    } else if draw < 0.60 {
        vec!["damage"]
    } else if draw < 0.85 {
        vec!["support"]
    } else {
        let two = [
            ["tank", "damage"],
            ["tank", "support"],
            ["damage", "support"],
        ];
        two[rng.gen_range(0..3)].to_vec()
    }
}

/// `CANDIDATES` parties of 1-3 players (the MMR and wait of one of
/// [`support::solo_pool`]'s solos each), each member with its role list.
fn pool(ratings: &[f64], rng: &mut ChaCha8Rng) -> Vec<Search> {
    let solos = support::solo_pool(CANDIDATES, ratings, 60.0, rng);
    let mut out = Vec::with_capacity(CANDIDATES * 2);
    for (c, solo) in solos.iter().enumerate() {
        let size = rng.gen_range(1..=3usize);
        let members: Vec<String> = (0..size).map(|k| format!("p{c}-{k}")).collect();
        for id in &members {
            let mut s = Search::solo(
                format!("tkt_{id}"),
                id.as_str(),
                solo.mmr.unwrap_or(1500.0),
                solo.queued_at,
            );
            s.attributes = std::sync::Arc::new(
                serde_json::from_value(serde_json::json!({ "roles": roles_of(rng) }))
                    .unwrap_or_default(),
            );
            if size > 1 {
                s.party = Some(Party {
                    id: format!("party{c}").into(),
                    members: members.clone(),
                });
            }
            out.push(s);
        }
    }
    out
}

fn configs() -> (GameModeConfig, GameModeConfig) {
    let mut plain = common::with_parties(common::mmr_mode(&[5, 5], 5.0, 2.0), 3, true);
    plain.attributes = serde_json::from_value(serde_json::json!({
        "roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}
    }))
    .unwrap_or_default();
    let mut roles = plain.clone();
    roles.composition = serde_json::from_value(serde_json::json!({
        "attribute": "roles", "perTeam": {"tank": 1, "damage": 2, "support": 2}
    }))
    .ok();
    (plain, roles)
}

fn bench_roles(c: &mut Criterion) {
    let ratings = support::real_ratings();
    let mut rng = ChaCha8Rng::seed_from_u64(CANDIDATES as u64);
    let pool = pool(&ratings, &mut rng);
    let (plain, roles) = configs();
    let mut group = c.benchmark_group("roles_cycle_5v5_100k");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(CANDIDATES as u64));
    for (name, cfg) in [("plain", &plain), ("roles", &roles)] {
        let out = run_cycle(cfg, &pool, 0.0, &mut rng);
        let matched: usize = out.matches.len() * 10;
        eprintln!(
            "{name}: {matched} of {} players matched in one cycle ({:.1} %)",
            pool.len(),
            100.0 * matched as f64 / pool.len() as f64
        );
        group.bench_with_input(BenchmarkId::from_parameter(name), &pool, |b, pool| {
            b.iter(|| run_cycle(cfg, pool, 0.0, &mut rng))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_roles);
criterion_main!(benches);
