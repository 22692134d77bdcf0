//! Builders shared by the matching-core tests.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::{
    run_cycle, Algorithm, CycleOutcome, GameModeConfig, Parties, Party, Search, TeamAssignment,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub fn mmr_mode(shape: &[u32], base: f64, mult: f64) -> GameModeConfig {
    GameModeConfig {
        name: "test".into(),
        enabled: true,
        match_shape: shape.to_vec().into(),
        matchmaking_cycle_duration_seconds: 1.0,
        algorithm: Algorithm::Mmr {
            min_mmr: 0.0,
            max_mmr: 3000.0,
            base_tolerance: base,
            expansion_multiplier: mult,
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
        acceptance: None,
        assignment: None,
        backfill: None,
        recording: None,
        attributes: None,
        rules: Vec::new(),
        composition: None,
    }
}

pub fn with_parties(
    mut config: GameModeConfig,
    max_size: u32,
    keep_together: bool,
) -> GameModeConfig {
    config.parties = Parties {
        allow_parties: true,
        max_size,
        keep_together,
        ..Parties::default()
    };
    config
}

pub fn ping_mode(shape: &[u32], max_delta: f64) -> GameModeConfig {
    let mut c = mmr_mode(shape, 5.0, 2.0);
    c.algorithm = Algorithm::Ping { max_delta };
    c
}

pub fn fifo_mode(shape: &[u32]) -> GameModeConfig {
    let mut c = mmr_mode(shape, 5.0, 2.0);
    c.algorithm = Algorithm::Fifo {};
    c
}

pub fn solo(id: &str, mmr: f64, queued_at: f64) -> Search {
    Search::solo(format!("tkt_{id}"), id, mmr, queued_at)
}

pub fn pinged(id: &str, ping: f64, queued_at: f64) -> Search {
    Search {
        ticket_id: format!("tkt_{id}").into(),
        player_id: id.into(),
        party: None,
        mmr: None,
        ping_ms: Some(ping),
        latencies: None,
        queued_at,
        attributes: Default::default(),
    }
}

/// Every member of a party `pid` of the given size, all with `mmr`.
pub fn party(pid: &str, size: usize, mmr: f64, queued_at: f64) -> Vec<Search> {
    let members: Vec<String> = (0..size).map(|i| format!("{pid}-{i}")).collect();
    members
        .iter()
        .map(|m| Search {
            ticket_id: format!("tkt_{m}").into(),
            player_id: m.as_str().into(),
            party: Some(Party {
                id: pid.into(),
                members: members.clone(),
            }),
            mmr: Some(mmr),
            ping_ms: None,
            latencies: None,
            queued_at,
            attributes: Default::default(),
        })
        .collect()
}

pub fn cycle(config: &GameModeConfig, pool: &[Search], now: f64) -> CycleOutcome {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    run_cycle(config, pool, now, &mut rng)
}

/// Team player-id lists of every match, each team sorted.
pub fn teams_of(outcome: &CycleOutcome) -> Vec<Vec<Vec<String>>> {
    outcome
        .matches
        .iter()
        .map(|m| {
            m.teams
                .iter()
                .map(|t| {
                    let mut ids: Vec<String> =
                        t.players.iter().map(|p| p.player_id.to_string()).collect();
                    ids.sort();
                    ids
                })
                .collect()
        })
        .collect()
}

/// Party sizes per team of one match, each team's sizes sorted descending.
pub fn party_sizes(outcome: &CycleOutcome, m: usize) -> Vec<Vec<usize>> {
    outcome.matches[m]
        .teams
        .iter()
        .map(|t| {
            let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
            for p in &t.players {
                let key = p
                    .party_id
                    .clone()
                    .unwrap_or_else(|| p.player_id.clone())
                    .to_string();
                *counts.entry(key).or_default() += 1;
            }
            let mut sizes: Vec<usize> = counts.into_values().collect();
            sizes.sort_by(|a, b| b.cmp(a));
            sizes
        })
        .collect()
}

/// The `attributes` and `rules` of docs/rules.md's first example, read
/// from the page itself (a build, a crossplay pool turned off after 90 s,
/// a three-map vote, levels within 10 widening to 40, block lists).
pub fn rules_example() -> serde_json::Value {
    let page = include_str!("../../docs/rules.md");
    let block = page
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap();
    serde_json::from_str(&format!("{{{block}}}")).unwrap()
}

/// The five rules of docs/rules.md's example ([`rules_example`]) on an
/// MMR mode of `shape`.
pub fn ruled(shape: &[u32]) -> GameModeConfig {
    let mut c = mmr_mode(shape, 5.0, 2.0);
    let block = rules_example();
    c.attributes = serde_json::from_value(block["attributes"].clone()).unwrap();
    c.rules = serde_json::from_value(block["rules"].clone()).unwrap();
    c
}

/// A solo search with declared `attrs` (a JSON object).
pub fn player(id: &str, mmr: f64, at: f64, attrs: serde_json::Value) -> Search {
    let mut s = solo(id, mmr, at);
    s.attributes = serde_json::from_value(attrs).unwrap();
    s
}

/// The roles of the role-queue property tests, sorted as a composition
/// indexes them.
pub const ROLES: [&str; 3] = ["damage", "support", "tank"];

/// A pool of parties `(size, mmr offset, role masks)`: party `p` queued at
/// `p` seconds, each member at MMR 1000 + offset, member `k` listing the
/// roles of `masks[k % len]` (bit `b` is `ROLES[b]`).
pub fn role_pool(parties: &[(usize, u16, Vec<u8>)]) -> Vec<Search> {
    let mut pool = Vec::new();
    for (p, (size, mmr, masks)) in parties.iter().enumerate() {
        let ids: Vec<String> = (0..*size).map(|k| format!("p{p}-{k}")).collect();
        for (k, id) in ids.iter().enumerate() {
            let mask = masks[k % masks.len()];
            let listed: Vec<&str> = (0..3)
                .filter(|b| mask & (1 << b) != 0)
                .map(|b| ROLES[b])
                .collect();
            let mut s = solo(id, 1000.0 + f64::from(*mmr), p as f64);
            s.attributes = serde_json::from_value(serde_json::json!({ "roles": listed })).unwrap();
            if *size > 1 {
                s.party = Some(Party {
                    id: format!("party{p}").into(),
                    members: ids.clone(),
                });
            }
            pool.push(s);
        }
    }
    pool
}

/// Seats of one team: `counts` over ROLES (sorted, as the composition
/// indexes them), then `any`.
pub fn per_team(counts: &[u32; 4]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (i, r) in ROLES.iter().enumerate() {
        if counts[i] > 0 {
            m.insert((*r).into(), serde_json::json!(counts[i]));
        }
    }
    if counts[3] > 0 {
        m.insert("any".into(), serde_json::json!(counts[3]));
    }
    serde_json::Value::Object(m)
}
