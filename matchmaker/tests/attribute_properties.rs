//! Property: no match the core forms ever breaks a rule over attributes
//! (docs/rules.md), on random pools with parties, relax steps, smaller
//! shapes and bots: every two candidates of a match fit every rule, each
//! by its own current version.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::backfill::fill_pass;
use matchplane_matchmaker::rules::AttributeValue;
use matchplane_matchmaker::rules::{RosterMember, RosterValues};
use matchplane_matchmaker::{
    BackfillConfig, Bots, Code, GameModeConfig, MatchedPlayer, OpenBackfill, Party, ProposedMatch,
    Relaxation, Search,
};
use proptest::prelude::*;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};

const MAPS: [&str; 4] = ["dust", "inferno", "nuke", "ancient"];

fn config(shape: u32, relax: bool, bots: bool) -> GameModeConfig {
    let mut c = with_parties(mmr_mode(&[shape, shape], 3.0, 1.5), 2, true);
    let block: GameModeConfig = serde_json::from_value(json!({
        "name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"},
        "attributes": {
            "build":   { "type": "string" },
            "pool":    { "type": "string" },
            "maps":    { "type": "stringSet", "values": MAPS },
            "level":   { "type": "number", "min": 1, "max": 100, "party": "max" },
            "blocked": { "type": "playerSet", "default": [] }
        },
        "rules": [
            { "name": "same-build", "type": "equal", "attribute": "build" },
            { "name": "platform", "type": "equal", "attribute": "pool",
              "relax": [ { "afterSeconds": 40, "off": true } ] },
            { "name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 2,
              "relax": [ { "afterSeconds": 20, "minOverlap": 1 } ] },
            { "name": "level", "type": "distance", "attribute": "level", "max": 8,
              "relax": [ { "afterSeconds": 30, "max": 20 }, { "afterSeconds": 60, "max": 45 } ] },
            { "name": "no-blocked", "type": "avoid", "attribute": "blocked" }
        ]
    }))
    .unwrap();
    c.attributes = block.attributes;
    c.rules = block.rules;
    if relax && shape > 1 {
        c.relaxations = vec![Relaxation {
            after_seconds: 25.0,
            match_shape: vec![shape - 1, shape - 1],
        }];
    }
    if bots {
        c.bots = Some(Bots {
            fill_after_seconds: 50.0,
            min_humans: 1,
            replaceable: false,
        });
    }
    c
}

#[derive(Debug, Clone)]
struct Arrival {
    size: usize,
    mmr: f64,
    queued_at: f64,
    build: u8,
    pool: u8,
    maps: Vec<u8>,
    level: Vec<f64>,
    blocked: Vec<usize>,
}

fn arrival() -> impl Strategy<Value = Arrival> {
    (
        prop_oneof![4 => Just(1usize), 1 => Just(2usize)],
        1400.0..1600.0f64,
        0.0..100.0f64,
        0u8..2,
        0u8..2,
        prop::collection::vec(0u8..4, 2..4),
        prop::collection::vec(1.0..100.0f64, 2),
        prop::collection::vec(0usize..40, 0..3),
    )
        .prop_map(
            |(size, mmr, queued_at, build, pool, maps, level, blocked)| Arrival {
                size,
                mmr,
                queued_at,
                build,
                pool,
                maps,
                level,
                blocked,
            },
        )
}

fn build_pool(arrivals: &[Arrival]) -> Vec<Search> {
    let mut out = Vec::new();
    for (i, a) in arrivals.iter().enumerate() {
        let members: Vec<String> = (0..a.size).map(|m| format!("p{i}-{m}")).collect();
        for (m, id) in members.iter().enumerate() {
            let maps: BTreeSet<&str> = a.maps.iter().skip(m).map(|k| MAPS[*k as usize]).collect();
            let blocked: BTreeSet<String> = a.blocked.iter().map(|b| format!("p{b}-0")).collect();
            let attrs = json!({
                "build": format!("b{}", a.build), "pool": format!("q{}", a.pool),
                "maps": maps, "level": a.level[m].round(), "blocked": blocked,
            });
            out.push(Search {
                ticket_id: format!("tkt_{id}").into(),
                player_id: id.as_str().into(),
                party: (a.size > 1).then(|| Party {
                    id: format!("party{i}").into(),
                    members: members.clone(),
                }),
                mmr: Some(a.mmr),
                ping_ms: None,
                latencies: None,
                queued_at: a.queued_at,
                attributes: serde_json::from_value(attrs).unwrap(),
            });
        }
    }
    out
}

/// A candidate of a match as the oracle sees it.
struct Side {
    wait: f64,
    build: String,
    pool: String,
    maps: BTreeSet<String>,
    level: f64,
    blocked: BTreeSet<String>,
    players: Vec<String>,
}

fn text(v: &AttributeValue) -> String {
    match v {
        AttributeValue::Text(t) => t.clone(),
        other => panic!("{other:?}"),
    }
}

fn set(v: Option<&AttributeValue>) -> BTreeSet<String> {
    match v {
        Some(AttributeValue::Set(s)) => s.iter().cloned().collect(),
        None => BTreeSet::new(),
        other => panic!("{other:?}"),
    }
}

fn sides(m: &ProposedMatch) -> Vec<Side> {
    sides_of(m.teams.iter().flat_map(|t| &t.players))
}

fn sides_of<'a>(players: impl Iterator<Item = &'a MatchedPlayer>) -> Vec<Side> {
    let mut by_party: HashMap<String, Vec<_>> = HashMap::new();
    for p in players {
        let key = p
            .party_id
            .as_ref()
            .map_or(format!("solo:{}", p.player_id), |id| id.to_string());
        by_party.entry(key).or_default().push(p);
    }
    by_party
        .into_values()
        .map(|members| {
            let mut maps = set(members[0].attributes.get("maps"));
            let mut blocked = BTreeSet::new();
            let mut level = f64::NEG_INFINITY;
            for p in &members {
                maps = maps
                    .intersection(&set(p.attributes.get("maps")))
                    .cloned()
                    .collect();
                blocked.extend(set(p.attributes.get("blocked")));
                if let Some(AttributeValue::Number(l)) = p.attributes.get("level") {
                    level = level.max(*l);
                }
            }
            Side {
                wait: members.iter().map(|p| p.wait_seconds).fold(0.0, f64::max),
                build: members[0]
                    .attributes
                    .get("build")
                    .map(text)
                    .unwrap_or_default(),
                pool: members[0]
                    .attributes
                    .get("pool")
                    .map(text)
                    .unwrap_or_default(),
                maps,
                level,
                blocked,
                players: members.iter().map(|p| p.player_id.to_string()).collect(),
            }
        })
        .collect()
}

fn step(wait: f64, steps: &[(f64, f64)], base: f64) -> f64 {
    steps
        .iter()
        .rev()
        .find(|(t, _)| wait >= *t)
        .map_or(base, |(_, v)| *v)
}

/// The `equal`, `distance` and `avoid` rules between two sides, each by
/// its own version.
fn pair(a: &Side, b: &Side) -> Result<(), String> {
    if a.build != b.build {
        return Err("builds differ".into());
    }
    if a.pool != b.pool && !(a.wait >= 40.0 && b.wait >= 40.0) {
        return Err(format!("pools differ at waits {} and {}", a.wait, b.wait));
    }
    let steps = [(30.0, 20.0), (60.0, 45.0)];
    let max = step(a.wait, &steps, 8.0).min(step(b.wait, &steps, 8.0));
    if (a.level - b.level).abs() > max + 1e-9 {
        return Err(format!("levels {} and {} beyond {max}", a.level, b.level));
    }
    blocks(a, b)
}

fn blocks(a: &Side, b: &Side) -> Result<(), String> {
    if a.players.iter().any(|p| b.blocked.contains(p))
        || b.players.iter().any(|p| a.blocked.contains(p))
    {
        return Err("a blocked player".into());
    }
    Ok(())
}

fn check(m: &ProposedMatch) -> Result<(), String> {
    let sides = sides(m);
    let need = sides
        .iter()
        .map(|s| step(s.wait, &[(20.0, 1.0)], 2.0) as usize)
        .max()
        .unwrap_or(0);
    let shared = sides.iter().skip(1).fold(sides[0].maps.clone(), |acc, s| {
        acc.intersection(&s.maps).cloned().collect()
    });
    if shared.len() < need {
        return Err(format!("maps: {shared:?} shared, {need} needed"));
    }
    for (i, a) in sides.iter().enumerate() {
        for b in &sides[i + 1..] {
            pair(a, b)?;
        }
    }
    let expected = m.attributes.clone();
    match expected.get("maps") {
        Some(AttributeValue::Set(v)) if v.iter().cloned().collect::<BTreeSet<_>>() == shared => {}
        other => return Err(format!("match maps {other:?}, shared {shared:?}")),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn no_match_breaks_a_rule(
        arrivals in prop::collection::vec(arrival(), 2..40),
        shape in 1u32..=3,
        relax in any::<bool>(),
        bots in any::<bool>(),
        now in 100.0..200.0f64,
    ) {
        let config = config(shape, relax, bots);
        let pool = build_pool(&arrivals);
        let out = cycle(&config, &pool, now);
        for m in &out.matches {
            if let Err(e) = check(m) {
                prop_assert!(false, "{e}: {m:#?}");
            }
        }
        // Nobody lost: every search is matched, waiting or failed.
        let seated: usize = out.matches.iter().flat_map(|m| &m.teams).map(|t| t.players.len()).sum();
        prop_assert_eq!(seated + out.waiting.len() + out.failed.len(), pool.len());
        prop_assert!(out.failed.iter().all(|f| f.code == Code::PartyAttributesDiffer || f.code == Code::PlayerAlreadySearching));
    }
}

/// A roster player as the oracle sees it: its id, and its values when
/// known (`None`: a player matchplane never saw).
fn roster_side(member: &RosterMember, age: f64, request_maps: Option<&BTreeSet<String>>) -> Side {
    let a = &member.attributes;
    Side {
        wait: age,
        build: a.get("build").map(text).unwrap_or_default(),
        pool: a.get("pool").map(text).unwrap_or_default(),
        maps: request_maps.cloned().unwrap_or_else(|| set(a.get("maps"))),
        level: match a.get("level") {
            Some(AttributeValue::Number(l)) => *l,
            _ => f64::NAN,
        },
        blocked: set(a.get("blocked")),
        players: vec![member.player_id.clone()],
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// No fill breaks a rule (docs/rules.md#backfill): every newcomer fits
    /// every other newcomer and every roster player whose values are known
    /// (the request's maps standing for the roster), each by its own
    /// version (the roster's at the backfill's age); nobody blocks or is
    /// blocked by any roster player.
    #[test]
    fn no_fill_breaks_a_rule(
        arrivals in prop::collection::vec(arrival(), 1..30),
        roster in prop::collection::vec(arrival().prop_map(|mut a| { a.size = 1; a }), 1..4),
        strangers in 0usize..3,
        request_maps in prop::option::of(prop::collection::btree_set(0usize..4, 1..3)),
        seats in (0u32..3, 0u32..3),
        age in 0.0..100.0f64,
        now in 100.0..200.0f64,
    ) {
        let mut config = config(3, false, false);
        config.backfill = Some(BackfillConfig::default());
        let pool = build_pool(&arrivals);
        // Roster players are p30-0.., which arrivals' block lists may name.
        let mut members: Vec<RosterMember> = build_pool(&roster)
            .into_iter()
            .enumerate()
            .map(|(i, s)| RosterMember { player_id: format!("p{}-0", 30 + i), attributes: (*s.attributes).clone() })
            .collect();
        members.extend((0..strangers).map(|i| RosterMember {
            player_id: format!("p{}-0", 35 + i),
            attributes: Default::default(),
        }));
        let request_maps: Option<BTreeSet<String>> =
            request_maps.map(|m| m.iter().map(|k| MAPS[*k].to_owned()).collect());
        let mut values = RosterValues { attributes: Default::default(), players: members.clone() };
        if let Some(maps) = &request_maps {
            values.attributes.insert("maps".into(), AttributeValue::Set(maps.iter().cloned().collect()));
        }
        let backfill = OpenBackfill {
            open_roles: Vec::new(),
            backfill_id: "bf_1".into(),
            match_id: "mat_1".into(),
            revision: 1,
            open_seats: vec![seats.0, seats.1],
            opened_at: now - age,
            expires_at: now + 100.0,
            mean_mmr: None,
            pings: Vec::new(),
            region: None,
            roster: values,
        };
        let out = fill_pass(&config, &pool, &[backfill], now);
        for fill in &out.fills {
            let newcomers = sides_of(fill.teams.iter().flat_map(|t| &t.players));
            let roster: Vec<Side> = members
                .iter()
                .map(|m| roster_side(m, age, request_maps.as_ref()))
                .collect();
            let need = newcomers
                .iter()
                .map(|s| s.wait)
                .chain(std::iter::once(age))
                .map(|w| step(w, &[(20.0, 1.0)], 2.0) as usize)
                .max()
                .unwrap_or(0);
            let known = members.iter().zip(&roster).filter(|(m, _)| !m.attributes.is_empty());
            let mut shared: Option<BTreeSet<String>> = request_maps.clone();
            for (_, r) in known.clone().filter(|_| request_maps.is_none()) {
                shared = Some(shared.map_or(r.maps.clone(), |s| s.intersection(&r.maps).cloned().collect()));
            }
            for n in &newcomers {
                shared = Some(shared.map_or(n.maps.clone(), |s| s.intersection(&n.maps).cloned().collect()));
            }
            let shared = shared.unwrap_or_default();
            prop_assert!(shared.len() >= need, "maps {:?} shared, {} needed: {:#?}", shared, need, fill);
            for (i, a) in newcomers.iter().enumerate() {
                for b in &newcomers[i + 1..] {
                    if let Err(e) = pair(a, b) { prop_assert!(false, "{}: {:#?}", e, fill); }
                }
                for (m, r) in members.iter().zip(&roster) {
                    let verdict = if m.attributes.is_empty() { blocks(a, r) } else { pair(a, r) };
                    if let Err(e) = verdict { prop_assert!(false, "{} against roster {}: {:#?}", e, m.player_id, fill); }
                }
            }
        }
    }
}
