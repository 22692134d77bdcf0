//! Property tests of the thin-pool rules over random pools: no match breaks
//! anyone's current range (capped by `maxTolerance`), no party is split,
//! relaxed and bot matches never form before their time, full matches come
//! first, flexible matches respect every min and max.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use arcstr::ArcStr;
use common::*;
use matchplane_matchmaker::tolerance::capped_mmr_range;
use matchplane_matchmaker::{
    Bots, CycleOutcome, FlexibleShape, GameModeConfig, MatchShape, Party, ProposedMatch,
    Relaxation, Search, TeamSize,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
struct Arrival {
    size: usize,
    mmr: f64,
    queued_at: f64,
}

fn arrival() -> impl Strategy<Value = Arrival> {
    (
        prop_oneof![6 => Just(1usize), 2 => Just(2usize), 1 => Just(3usize)],
        1200.0..1800.0f64,
        0.0..90.0f64,
    )
        .prop_map(|(size, mmr, queued_at)| Arrival {
            size,
            mmr,
            queued_at,
        })
}

fn build_pool(arrivals: &[Arrival], max_party: usize) -> Vec<Search> {
    let mut pool = Vec::new();
    for (i, a) in arrivals.iter().enumerate() {
        let size = a.size.min(max_party);
        let members: Vec<String> = (0..size).map(|m| format!("p{i}-{m}")).collect();
        for (m, id) in members.iter().enumerate() {
            pool.push(Search {
                ticket_id: format!("tkt_{id}").into(),
                player_id: id.as_str().into(),
                party: (size > 1).then(|| Party {
                    id: format!("party{i}").into(),
                    members: members.clone(),
                }),
                mmr: Some(a.mmr + 10.0 * m as f64),
                ping_ms: None,
                latencies: None,
                queued_at: a.queued_at,
                attributes: Default::default(),
            });
        }
    }
    pool
}

/// A `[k, k]` mode (k in 2..=5) with relaxations to every smaller `[j, j]`,
/// optional bots after the last, optional `maxTolerance`.
fn thin_config() -> impl Strategy<Value = GameModeConfig> {
    (
        2u32..=5,
        prop::bool::ANY,
        prop::bool::ANY,
        prop::bool::ANY,
        1u32..=4,
    )
        .prop_map(|(k, keep, bots, cap, min_humans)| {
            let mut c = with_parties(mmr_mode(&[k, k], 2.0, 1.5), 2.min(k), keep);
            c.relaxations = (1..k)
                .rev()
                .enumerate()
                .map(|(i, j)| Relaxation {
                    after_seconds: 10.0 * (i as f64 + 1.0),
                    match_shape: vec![j, j],
                })
                .collect();
            if bots {
                c.bots = Some(Bots {
                    fill_after_seconds: 10.0 * f64::from(k),
                    min_humans: min_humans.min(2 * k),
                    replaceable: true,
                });
            }
            if cap {
                if let matchplane_matchmaker::Algorithm::Mmr { max_tolerance, .. } =
                    &mut c.algorithm
                {
                    *max_tolerance = Some(4.0);
                }
            }
            c
        })
}

fn flexible_config() -> impl Strategy<Value = GameModeConfig> {
    (2u32..=8, 1u32..=2, 1u32..=3, 0u32..=6, 0.0..30.0f64).prop_map(
        |(teams, min, extra, min_teams, settle)| {
            let max = min + extra - 1;
            let mut c = with_parties(mmr_mode(&[1, 1], 2.0, 1.5), 2.min(max), true);
            c.match_shape = MatchShape::Flexible(FlexibleShape {
                teams,
                team_size: TeamSize { min, max },
                min_teams: Some((2 + min_teams).min(teams)),
                settle_after_seconds: Some(settle),
            });
            c
        },
    )
}

/// Anchor wait of a match: the longest wait of its units (seconds).
fn longest_wait(m: &ProposedMatch) -> f64 {
    m.teams
        .iter()
        .flat_map(|t| t.players.iter().map(|p| p.wait_seconds))
        .fold(0.0, f64::max)
}

fn check_common(
    config: &GameModeConfig,
    pool: &[Search],
    out: &CycleOutcome,
    now: f64,
) -> Result<(), TestCaseError> {
    let by_ticket: HashMap<&str, &Search> =
        pool.iter().map(|s| (s.ticket_id.as_str(), s)).collect();
    let mut seen = HashSet::new();
    for m in &out.matches {
        for t in m.ticket_ids() {
            prop_assert!(seen.insert(t.to_string()), "{t} twice");
        }
    }
    for w in &out.waiting {
        prop_assert!(seen.insert(w.ticket_id.to_string()));
        prop_assert!(w.needed >= 1);
    }
    prop_assert_eq!(seen.len(), pool.len() - out.failed.len());
    for m in &out.matches {
        // Parties whole and on one team.
        let mut party_team: HashMap<ArcStr, HashSet<usize>> = HashMap::new();
        let mut party_count: HashMap<ArcStr, usize> = HashMap::new();
        for t in &m.teams {
            for p in &t.players {
                if let Some(pid) = &p.party_id {
                    party_team.entry(pid.clone()).or_default().insert(t.index);
                    *party_count.entry(pid.clone()).or_default() += 1;
                }
            }
        }
        for (pid, count) in &party_count {
            let members = pool
                .iter()
                .find(|s| s.party.as_ref().map(|p| &p.id) == Some(pid))
                .unwrap()
                .party
                .as_ref()
                .unwrap()
                .members
                .len();
            prop_assert_eq!(*count, members, "party {} matched short-handed", pid);
            if config.parties.keep_together {
                prop_assert_eq!(party_team[pid].len(), 1, "party {} split", pid);
            }
        }
        // Every unit in range of every other, at the capped range.
        let mut units: HashMap<ArcStr, Vec<&Search>> = HashMap::new();
        for t in m.ticket_ids() {
            let s = by_ticket[t];
            let key = s
                .party
                .as_ref()
                .map(|p| p.id.clone())
                .unwrap_or_else(|| s.ticket_id.clone());
            units.entry(key).or_default().push(s);
        }
        let values: Vec<(f64, f64)> = units
            .values()
            .map(|ms| {
                let mmr = ms.iter().map(|s| s.mmr.unwrap()).sum::<f64>() / ms.len() as f64;
                let start = ms.iter().map(|s| s.queued_at).fold(f64::INFINITY, f64::min);
                (mmr, capped_mmr_range(&config.algorithm, now - start))
            })
            .collect();
        for a in &values {
            for b in &values {
                prop_assert!(
                    (a.0 - b.0).abs() <= a.1.min(b.1) + 1e-6,
                    "out of range: {a:?} {b:?}"
                );
            }
        }
        // The team sizes are the shape used; bots complete the base shape.
        let seats: Vec<u32> = m
            .teams
            .iter()
            .map(|t| t.players.len() as u32 + t.bots)
            .collect();
        prop_assert_eq!(&seats, &m.match_shape);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn thin_pool_invariants(config in thin_config(), arrivals in prop::collection::vec(arrival(), 0..40), now in 90.0..130.0f64) {
        let pool = build_pool(&arrivals, config.parties.max_size as usize);
        let out = cycle(&config, &pool, now);
        check_common(&config, &pool, &out, now)?;
        let base = config.match_shape.caps();
        for m in &out.matches {
            let wait = longest_wait(m);
            let bots: u32 = m.teams.iter().map(|t| t.bots).sum();
            if bots > 0 {
                let b = config.bots.as_ref().unwrap();
                prop_assert!(wait >= b.fill_after_seconds, "bot match at {wait}");
                prop_assert_eq!(&m.match_shape, &base);
                let humans: u32 = m.teams.iter().map(|t| t.players.len() as u32).sum();
                prop_assert!(humans >= b.min_humans);
            } else if m.match_shape != base {
                let step = config.relaxations.iter().find(|r| r.match_shape == m.match_shape).unwrap();
                prop_assert!(wait >= step.after_seconds, "relaxed {:?} at {wait}", m.match_shape);
            }
            let open: Vec<u32> = base.iter().zip(&m.match_shape).map(|(b, u)| b - u).collect();
            if bots == 0 {
                prop_assert_eq!(&m.seats_open, &open);
            }
        }
        // Full matches first: the same cycle without the thin blocks makes
        // exactly the full matches this one makes, and they come first.
        let mut plain = config.clone();
        plain.relaxations.clear();
        plain.bots = None;
        let full = cycle(&plain, &pool, now);
        prop_assert!(full.matches.len() <= out.matches.len());
        for (a, b) in full.matches.iter().zip(&out.matches) {
            prop_assert_eq!(a.ticket_ids(), b.ticket_ids());
            prop_assert_eq!(&b.match_shape, &base);
        }
    }

    #[test]
    fn nothing_relaxed_or_botted_before_its_time(config in thin_config(), arrivals in prop::collection::vec(arrival(), 0..40)) {
        // Everybody arrived at 85..90 s, the cycle runs at 90 s: waits under 5 s.
        let arrivals: Vec<Arrival> = arrivals.into_iter().map(|a| Arrival { queued_at: 85.0 + a.queued_at / 18.0, ..a }).collect();
        let pool = build_pool(&arrivals, config.parties.max_size as usize);
        let out = cycle(&config, &pool, 90.0);
        check_common(&config, &pool, &out, 90.0)?;
        for m in &out.matches {
            prop_assert_eq!(&m.match_shape, &config.match_shape.caps());
            prop_assert!(m.teams.iter().all(|t| t.bots == 0));
        }
    }

    #[test]
    fn flexible_matches_respect_every_min_and_max(config in flexible_config(), arrivals in prop::collection::vec(arrival(), 0..50), now in 90.0..100.0f64) {
        let pool = build_pool(&arrivals, config.parties.max_size as usize);
        let out = cycle(&config, &pool, now);
        check_common(&config, &pool, &out, now)?;
        let flex = config.match_shape.flexible().unwrap().clone();
        for m in &out.matches {
            let teams = m.teams.len() as u32;
            prop_assert!(teams <= flex.teams && teams >= flex.min_teams(), "{teams} teams");
            for t in &m.teams {
                let n = t.players.len() as u32;
                prop_assert!(n >= flex.team_size.min && n <= flex.team_size.max, "team of {n}");
            }
            let full = teams == flex.teams && m.teams.iter().all(|t| t.players.len() as u32 == flex.team_size.max);
            if !full {
                prop_assert!(longest_wait(m) >= flex.settle_after(), "settled at {}", longest_wait(m));
            }
            for (t, open) in m.teams.iter().zip(&m.seats_open) {
                prop_assert_eq!(*open, flex.team_size.max - t.players.len() as u32);
            }
        }
    }
}
