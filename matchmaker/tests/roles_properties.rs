//! Properties of role queues (docs/rules.md, "Role queues"): every match
//! has exactly its role seats per team, every player in a role it listed
//! (or an `any` seat), parties whole with `keepTogether`; the exact
//! seating search agrees with brute force on small groups.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::roles::seat::{
    assign_scaled, can_seat, fits_pooled, seat_group, Choice,
};
use matchplane_matchmaker::roles::RoleSeats;
use matchplane_matchmaker::GameModeConfig;
use proptest::prelude::*;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};

fn mode(team: u32, counts: &[u32; 4], keep_together: bool, fifo: bool) -> GameModeConfig {
    let mut c = if fifo {
        fifo_mode(&[team, team])
    } else {
        mmr_mode(&[team, team], 20.0, 2.0)
    };
    c = with_parties(c, 3.min(team), keep_together);
    c.attributes = serde_json::from_value(json!({
        "roles": {"type": "stringSet", "values": ROLES}
    }))
    .unwrap();
    c.composition = Some(
        serde_json::from_value(json!({"attribute": "roles", "perTeam": per_team(counts)})).unwrap(),
    );
    c
}

/// Splits `team` seats over the three roles and `any` by `weights`.
fn split(team: u32, weights: [u32; 4]) -> [u32; 4] {
    let mut counts = [0u32; 4];
    let mut left = team;
    for i in 0..3 {
        let take = (weights[i] % 3).min(left);
        counts[i] = take;
        left -= take;
    }
    counts[3] = left;
    counts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_match_has_exactly_its_role_seats_and_every_player_a_listed_role(
        team in 2u32..=5,
        weights in prop::array::uniform4(0u32..3),
        keep_together in any::<bool>(),
        fifo in any::<bool>(),
        snake in any::<bool>(),
        parties in prop::collection::vec(
            (1usize..=3, 0u16..200, prop::collection::vec(1u8..8, 1..=3)), 4..40),
    ) {
        let counts = split(team, weights);
        let mut config = mode(team, &counts, keep_together, fifo);
        if snake {
            config.team_assignment = matchplane_matchmaker::TeamAssignment::Snake;
        }
        let parties: Vec<_> = parties.into_iter().map(|(s, m, r)| (s.min(team as usize), m, r)).collect();
        let pool = role_pool(&parties);
        let listed: HashMap<String, Vec<String>> = pool.iter().map(|s| {
            let Some(matchplane_matchmaker::rules::AttributeValue::Set(r)) = s.attributes.get("roles") else { unreachable!() };
            (s.player_id.to_string(), r.clone())
        }).collect();
        let out = cycle(&config, &pool, 200.0);
        let mut seen = std::collections::HashSet::new();
        for m in &out.matches {
            for t in &m.teams {
                let mut got: BTreeMap<String, u32> = BTreeMap::new();
                for p in &t.players {
                    prop_assert!(seen.insert(p.player_id.to_string()));
                    let role = p.role.as_ref().expect("a role").to_string();
                    prop_assert!(role == "any" || listed[p.player_id.as_str()].contains(&role),
                        "{} seated as {role}, listed {:?}", p.player_id, listed[p.player_id.as_str()]);
                    *got.entry(role).or_insert(0) += 1;
                }
                let mut want: BTreeMap<String, u32> = BTreeMap::new();
                for (i, r) in ROLES.iter().enumerate() {
                    if counts[i] > 0 { want.insert((*r).into(), counts[i]); }
                }
                if counts[3] > 0 { want.insert("any".into(), counts[3]); }
                prop_assert_eq!(got, want);
            }
            if keep_together {
                let mut team_of_party: HashMap<String, usize> = HashMap::new();
                for t in &m.teams {
                    for p in &t.players {
                        if let Some(pid) = &p.party_id {
                            let at = *team_of_party.entry(pid.to_string()).or_insert(t.index);
                            prop_assert_eq!(at, t.index, "party {} split", pid);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_seating_search_agrees_with_brute_force(
        counts in prop::array::uniform4(0u32..3),
        units in prop::collection::vec(prop::collection::vec(0u64..8, 1..=2), 1..=6),
        values in prop::collection::vec(0.0f64..3000.0, 6),
    ) {
        let team: u32 = counts.iter().sum();
        prop_assume!(team > 0);
        let seats = RoleSeats { counts: counts[..3].to_vec(), any: counts[3] };
        let caps = [team, team];
        let refs: Vec<&[u64]> = units.iter().map(|u| u.as_slice()).collect();
        let unit_values: Vec<f64> = (0..units.len()).map(|u| values[u] * units[u].len() as f64).collect();
        let brute = brute_force(&refs, &unit_values, &caps, &seats);
        prop_assert_eq!(can_seat(&refs, &caps, &seats), brute.partial);
        let chosen = seat_group(&refs, &unit_values, &caps, &seats, Choice::Balanced);
        match (chosen, brute.best) {
            (None, None) => {}
            (Some(c), Some(best)) => {
                let mut sums = [0.0f64; 2];
                for (u, &t) in c.team_of.iter().enumerate() {
                    sums[t] += unit_values[u];
                    for (k, &r) in c.roles[u].iter().enumerate() {
                        prop_assert!(r == 3 || units[u][k] & (1 << r) != 0);
                    }
                }
                let spread = (sums[0] - sums[1]).abs() / f64::from(team);
                prop_assert!((spread - best).abs() < 1e-6, "exact {spread} vs brute {best}");
            }
            (c, b) => prop_assert!(false, "search {:?} vs brute {:?}", c, b),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A pool small enough to search whole, everyone in range of everyone:
    /// whenever some of its candidates seat into a full match, the cycle
    /// forms a match (the walk's nearest joiners never starve it).
    #[test]
    fn a_pool_with_a_role_seating_forms_a_match(
        team in 2u32..=4,
        weights in prop::array::uniform4(0u32..3),
        keep_together in any::<bool>(),
        fifo in any::<bool>(),
        parties in prop::collection::vec(
            (1usize..=3, 0u16..5, prop::collection::vec(1u8..8, 1..=3)), 2..=9),
    ) {
        let counts = split(team, weights);
        let config = mode(team, &counts, keep_together, fifo);
        let parties: Vec<_> = parties.into_iter().map(|(s, m, r)| (s.min(team as usize), m, r)).collect();
        let seats = RoleSeats { counts: counts[..3].to_vec(), any: counts[3] };
        // Each candidate's members' masks (as `role_pool` lists them).
        let units: Vec<Vec<u64>> = parties
            .iter()
            .map(|(size, _, masks)| (0..*size).map(|k| u64::from(masks[k % masks.len()])).collect())
            .collect();
        let formable = (1u32..(1 << units.len())).any(|bits| {
            let chosen: Vec<&[u64]> = (0..units.len())
                .filter(|u| bits >> u & 1 == 1)
                .flat_map(|u| {
                    if keep_together {
                        vec![units[u].as_slice()]
                    } else {
                        units[u].chunks(1).collect()
                    }
                })
                .collect();
            let players: usize = chosen.iter().map(|u| u.len()).sum();
            players == 2 * team as usize && can_seat(&chosen, &[team, team], &seats)
        });
        let out = cycle(&config, &role_pool(&parties), 200.0);
        prop_assert_eq!(!out.matches.is_empty(), formable, "{:?}", out);
    }

    #[test]
    fn halls_condition_agrees_with_the_matching(
        counts in prop::array::uniform4(0u32..3),
        masks in prop::collection::vec(0u64..8, 0..=12),
        teams in 1u32..=3,
    ) {
        let seats = RoleSeats { counts: counts[..3].to_vec(), any: counts[3] };
        let hall = fits_pooled(masks.iter().copied(), &seats, teams).unwrap();
        prop_assert_eq!(hall, assign_scaled(&masks, &seats, teams).is_some());
    }
}

struct Brute {
    /// Some seating with partial fill exists.
    partial: bool,
    /// The smallest spread of team means over full role-valid seatings.
    best: Option<f64>,
}

/// Whether `masks` fit `seats` by trying every role of every player.
fn team_ok(masks: &[u64], seats: &RoleSeats) -> bool {
    fn go(masks: &[u64], left: &mut [u32; 4]) -> bool {
        let Some((&m, rest)) = masks.split_first() else {
            return true;
        };
        for r in 0..4 {
            if left[r] > 0 && (r == 3 || m & (1 << r) != 0) {
                left[r] -= 1;
                let ok = go(rest, left);
                left[r] += 1;
                if ok {
                    return true;
                }
            }
        }
        false
    }
    let mut left = [seats.counts[0], seats.counts[1], seats.counts[2], seats.any];
    go(masks, &mut left)
}

fn brute_force(units: &[&[u64]], values: &[f64], caps: &[u32; 2], seats: &RoleSeats) -> Brute {
    let n = units.len();
    let mut partial = false;
    let mut best: Option<f64> = None;
    for bits in 0u32..(1 << n) {
        let mut teams: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        let mut sums = [0.0f64; 2];
        for (u, unit) in units.iter().enumerate() {
            let t = ((bits >> u) & 1) as usize;
            teams[t].extend_from_slice(unit);
            sums[t] += values[u];
        }
        if teams.iter().zip(caps).any(|(t, c)| t.len() > *c as usize) {
            continue;
        }
        if !teams.iter().all(|t| team_ok(t, seats)) {
            continue;
        }
        partial = true;
        if teams.iter().zip(caps).all(|(t, c)| t.len() == *c as usize) {
            let spread = (sums[0] - sums[1]).abs() / f64::from(caps[0]);
            best = Some(best.map_or(spread, |b: f64| b.min(spread)));
        }
    }
    Brute { partial, best }
}
