//! Property: a pool small enough to search whole forms a match whenever
//! some of its parties make one (docs/game-modes.md#how-a-cycle-forms-matches,
//! docs/rules.md "Seating"), whatever mix of closeness, rules over
//! attributes, regions and role seats decides who fits whom. The oracle tries every
//! subset of parties; the cycle must find one of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::roles::seat::can_seat;
use matchplane_matchmaker::roles::RoleSeats;
use matchplane_matchmaker::teams::can_pack;
use matchplane_matchmaker::tolerance::{fits, mmr_range};
use matchplane_matchmaker::{Code, GameModeConfig, Latencies, Regions, Search};
use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;

const MAPS: [&str; 3] = ["dust", "inferno", "nuke"];
const REGIONS: [&str; 2] = ["eu", "us"];
/// When the cycle runs; party `p` has waited `NOW - p` seconds.
const NOW: f64 = 30.0;

/// Which checks the mode makes.
#[derive(Debug, Clone)]
struct Checks {
    team: u32,
    keep_together: bool,
    fifo: bool,
    build: bool,
    /// `minOverlap` of the map rule, `None`: no map rule.
    maps: Option<u32>,
    level: bool,
    blocks: bool,
    regions: bool,
    /// Role seats of a team (see [`ROLES`], then `any`), `None`: no
    /// role queue.
    roles: Option<[u32; 4]>,
}

/// One party of the pool (its members alike in all but their ids).
#[derive(Debug, Clone)]
struct Arrival {
    size: u32,
    /// MMR step (see [`mmr_of`]).
    step: u8,
    build: u8,
    maps: Vec<u8>,
    level: u8,
    /// Parties (by index) whose players this one blocks.
    blocked: Vec<usize>,
    /// Latency to each region: 20 or 150 ms (the ceiling is 100).
    near: [bool; 2],
    /// Roles member `k` lists: `roles[k % len]` (bit `b` is `ROLES[b]`).
    roles: Vec<u8>,
}

fn checks() -> impl Strategy<Value = Checks> {
    (
        2u32..=4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), Just(Some(1u32)), Just(Some(2u32))],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(team, keep_together, fifo, build, maps, level, blocks, regions)| Checks {
                roles: None,
                team,
                keep_together,
                fifo,
                build,
                maps,
                level,
                blocks,
                regions,
            },
        )
}

fn arrival() -> impl Strategy<Value = Arrival> {
    (
        prop_oneof![2 => Just(1u32), 1 => Just(2u32), 2 => Just(3u32)],
        0u8..5,
        0u8..2,
        prop::collection::btree_set(0u8..3, 1..=3),
        0u8..30,
        prop::collection::vec(0usize..11, 0..=1),
        [any::<bool>(), any::<bool>()],
    )
        .prop_map(|(size, step, build, maps, level, blocked, near)| Arrival {
            roles: vec![0b111],
            size,
            step,
            build,
            maps: maps.into_iter().collect(),
            level,
            blocked,
            near,
        })
}

/// The roles member `k` of `a` lists, of those with a seat (a player
/// listing only roles without one is refused, not left waiting).
fn roles_of(c: &Checks, a: &Arrival, k: usize) -> u8 {
    let listed = a.roles[k % a.roles.len()];
    match &c.roles {
        Some(counts) if counts[3] == 0 => {
            let seated = (0..3)
                .filter(|&r| counts[r] > 0)
                .fold(0u8, |m, r| m | 1 << r);
            match listed & seated {
                0 => seated,
                some => some,
            }
        }
        _ => listed,
    }
}

/// Splits `team` seats over the three roles and `any` by `weights`.
fn split(team: u32, weights: [u32; 4]) -> [u32; 4] {
    let mut counts = [0u32; 4];
    let mut left = team;
    for i in 0..3 {
        let take = weights[i].min(left);
        counts[i] = take;
        left -= take;
    }
    counts[3] = left;
    counts
}

fn mode(c: &Checks) -> GameModeConfig {
    let shape = [c.team, c.team];
    let base = if c.fifo {
        fifo_mode(&shape)
    } else {
        mmr_mode(&shape, 5.0, 2.0)
    };
    let mut config = with_parties(base, 3.min(c.team), c.keep_together);
    let mut rules = Vec::new();
    if c.build {
        rules.push(json!({"name": "build", "type": "equal", "attribute": "build"}));
    }
    if let Some(min) = c.maps {
        rules.push(
            json!({"name": "map", "type": "intersect", "attribute": "maps", "minOverlap": min}),
        );
    }
    if c.level {
        rules.push(json!({"name": "level", "type": "distance", "attribute": "level", "max": 10}));
    }
    if c.blocks {
        rules.push(json!({"name": "no-blocked", "type": "avoid", "attribute": "blocked"}));
    }
    config.attributes = serde_json::from_value(json!({
        "build": {"type": "string", "default": "b0"},
        "maps": {"type": "stringSet", "values": MAPS, "default": MAPS},
        "level": {"type": "number", "min": 0, "max": 100, "default": 0},
        "blocked": {"type": "playerSet", "default": []},
        "roles": {"type": "stringSet", "values": ROLES, "default": ROLES}
    }))
    .unwrap();
    if let Some(counts) = &c.roles {
        config.composition = Some(
            serde_json::from_value(json!({"attribute": "roles", "perTeam": per_team(counts)}))
                .unwrap(),
        );
    }
    config.rules = serde_json::from_value(json!(rules)).unwrap();
    if c.regions {
        config.regions = Some(Regions {
            names: None,
            max_latency_ms: 100.0,
            expansion: Vec::new(),
        });
    }
    config
}

/// A party's MMR: steps 0-3 close together (10 apart), step 4 far out
/// (540 above 1000: in range of a party at 1000 only after 26 s of wait
/// on both sides, ranges being 150 + 15 per second).
fn mmr_of(step: u8) -> f64 {
    match step {
        4 => 1540.0,
        s => 1000.0 + 10.0 * f64::from(s),
    }
}

fn size_of(c: &Checks, a: &Arrival) -> u32 {
    a.size.min(3.min(c.team))
}

/// A party's maps: with `minOverlap` 2, at least two (a smaller set is
/// refused, not left waiting).
fn maps_of(c: &Checks, a: &Arrival) -> Vec<u8> {
    let mut maps = a.maps.clone();
    if c.maps == Some(2) && maps.len() < 2 {
        maps.push((maps[0] + 1) % 3);
    }
    maps
}

fn pool(c: &Checks, arrivals: &[Arrival]) -> Vec<Search> {
    let mut out = Vec::new();
    for (p, a) in arrivals.iter().enumerate() {
        let blocked: BTreeSet<String> = a
            .blocked
            .iter()
            .filter(|&&b| b < arrivals.len() && b != p)
            .flat_map(|&b| (0..size_of(c, &arrivals[b])).map(move |k| format!("p{b}-{k}")))
            .collect();
        let maps: Vec<&str> = maps_of(c, a).iter().map(|&m| MAPS[m as usize]).collect();
        let mmr = mmr_of(a.step);
        let latencies: Latencies = REGIONS
            .iter()
            .zip(a.near)
            .map(|(r, near)| ((*r).into(), if near { 20.0 } else { 150.0 }))
            .collect();
        let mut members = party(&format!("p{p}"), size_of(c, a) as usize, mmr, p as f64);
        for (k, m) in members.iter_mut().enumerate() {
            let mask = roles_of(c, a, k);
            let roles: Vec<&str> = (0..3)
                .filter(|b| mask & (1 << b) != 0)
                .map(|b| ROLES[b])
                .collect();
            m.attributes = std::sync::Arc::new(
                serde_json::from_value(json!({
                    "build": format!("b{}", a.build),
                    "maps": maps,
                    "level": a.level,
                    "blocked": blocked,
                    "roles": roles,
                }))
                .unwrap(),
            );
            if c.regions {
                m.latencies = Some(latencies.clone());
            }
            if size_of(c, a) == 1 {
                m.party = None;
            }
        }
        out.extend(members);
    }
    out
}

/// Whether parties `a` and `b` may play in one match, on every check but
/// the seats.
fn pair_fits(c: &Checks, arrivals: &[Arrival], a: usize, b: usize) -> bool {
    let (x, y) = (&arrivals[a], &arrivals[b]);
    let range = |p: usize| mmr_range(0.0, 3000.0, 5.0, 2.0, NOW - p as f64);
    (c.fifo || fits(mmr_of(x.step), range(a), mmr_of(y.step), range(b)))
        && (!c.build || x.build == y.build)
        && (!c.level || x.level.abs_diff(y.level) <= 10)
        && (!c.blocks || !(x.blocked.contains(&b) || y.blocked.contains(&a)))
}

/// Whether the parties `chosen` sit on the teams: in the role seats with
/// a role queue, else, with keep-together, packed whole.
fn seatable(c: &Checks, arrivals: &[Arrival], chosen: &[usize]) -> bool {
    let sizes: Vec<u32> = chosen.iter().map(|&p| size_of(c, &arrivals[p])).collect();
    let caps = [c.team, c.team];
    let Some(counts) = &c.roles else {
        return !c.keep_together || can_pack(&sizes, &caps);
    };
    let seats = RoleSeats {
        counts: counts[..3].to_vec(),
        any: counts[3],
    };
    let masks: Vec<Vec<u64>> = chosen
        .iter()
        .map(|&p| {
            let a = &arrivals[p];
            (0..size_of(c, a) as usize)
                .map(|k| u64::from(roles_of(c, a, k)))
                .collect()
        })
        .collect();
    let units: Vec<&[u64]> = if c.keep_together {
        masks.iter().map(Vec::as_slice).collect()
    } else {
        masks.iter().flat_map(|m| m.chunks(1)).collect()
    };
    can_seat(&units, &caps, &seats)
}

/// Whether the parties `chosen` make a match.
fn makes_a_match(c: &Checks, arrivals: &[Arrival], chosen: &[usize]) -> bool {
    let seats: u32 = chosen.iter().map(|&p| size_of(c, &arrivals[p])).sum();
    if seats != 2 * c.team || !seatable(c, arrivals, chosen) {
        return false;
    }
    if !chosen.iter().all(|&a| {
        chosen
            .iter()
            .all(|&b| a == b || pair_fits(c, arrivals, a, b))
    }) {
        return false;
    }
    if let Some(min) = c.maps {
        let shared = (0u8..3)
            .filter(|m| chosen.iter().all(|&p| maps_of(c, &arrivals[p]).contains(m)))
            .count();
        if (shared as u32) < min {
            return false;
        }
    }
    !c.regions || (0..2).any(|r| chosen.iter().all(|&p| arrivals[p].near[r]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whenever some parties of the pool make a match, the cycle forms
    /// one (and never one when none can be made).
    #[test]
    fn a_pool_holding_a_match_forms_one_whatever_decides_who_fits(
        c in checks(),
        arrivals in prop::collection::vec(arrival(), 2..=11),
    ) {
        let n = arrivals.len();
        let formable = (1u32..(1 << n)).any(|bits| {
            let chosen: Vec<usize> = (0..n).filter(|p| bits >> p & 1 == 1).collect();
            makes_a_match(&c, &arrivals, &chosen)
        });
        let out = cycle(&mode(&c), &pool(&c, &arrivals), NOW);
        prop_assert!(out.failed.is_empty(), "{:?}", out.failed);
        prop_assert_eq!(!out.matches.is_empty(), formable, "{:?}", out);
    }

    /// The same with role queues: the parties' players list random roles,
    /// and a match seats everyone in a role they listed.
    #[test]
    fn a_role_queue_holding_a_match_forms_one_whatever_decides_who_fits(
        c in checks(),
        weights in prop::array::uniform4(0u32..3),
        arrivals in prop::collection::vec((arrival(), prop::collection::vec(1u8..8, 1..=3)), 2..=11),
    ) {
        let c = Checks { roles: Some(split(c.team, weights)), ..c };
        let arrivals: Vec<Arrival> = arrivals.into_iter().map(|(a, roles)| Arrival { roles, ..a }).collect();
        let out = cycle(&mode(&c), &pool(&c, &arrivals), NOW);
        // A party no role seating can hold is failed; the rest must form
        // a match when some of them make one.
        let failed: BTreeSet<usize> = out
            .failed
            .iter()
            .map(|f| f.player_id.trim_start_matches('p').split('-').next().unwrap().parse().unwrap())
            .collect();
        prop_assert!(out.failed.iter().all(|f| f.code == Code::PartyAttributesDiffer), "{:?}", out.failed);
        prop_assert!(failed.iter().all(|&p| !seatable(&c, &arrivals, &[p])), "{:?}", out.failed);
        let n = arrivals.len();
        let formable = (1u32..(1 << n)).any(|bits| {
            let chosen: Vec<usize> = (0..n).filter(|p| bits >> p & 1 == 1).collect();
            chosen.iter().all(|p| !failed.contains(p)) && makes_a_match(&c, &arrivals, &chosen)
        });
        prop_assert_eq!(!out.matches.is_empty(), formable, "{:?}", out);
    }
}
