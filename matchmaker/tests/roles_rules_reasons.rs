//! Why a player of a role queue with rules is still waiting (docs/rules.md,
//! "Why a player is still waiting" and "Waiting for a role"): a rule is
//! named only when a candidate it turned away could have taken a role seat
//! the group left empty; otherwise the empty seats are.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::{GameModeConfig, Search, WaitingReason};
use serde_json::json;
use std::collections::BTreeMap;

/// A 5v5 role queue (1 tank, 2 healers, 2 dps a team) with a `same-build`
/// rule and a `no-blocked` rule.
fn mode(fifo: bool) -> GameModeConfig {
    let mut c = if fifo {
        fifo_mode(&[5, 5])
    } else {
        mmr_mode(&[5, 5], 50.0, 2.0)
    };
    c.attributes = serde_json::from_value(json!({
        "roles": {"type": "stringSet", "values": ["tank", "healer", "dps"]},
        "build": {"type": "string"},
        "blocked": {"type": "playerSet", "default": []}
    }))
    .unwrap();
    c.rules = serde_json::from_value(json!([
        {"name": "same-build", "type": "equal", "attribute": "build"},
        {"name": "no-blocked", "type": "avoid", "attribute": "blocked"}
    ]))
    .unwrap();
    c.composition = Some(
        serde_json::from_value(json!({
            "attribute": "roles",
            "perTeam": {"tank": 1, "healer": 2, "dps": 2}
        }))
        .unwrap(),
    );
    c
}

fn one(id: &str, mmr: f64, at: f64, build: &str, roles: &[&str], blocked: &[&str]) -> Search {
    player(
        id,
        mmr,
        at,
        json!({"build": build, "roles": roles, "blocked": blocked}),
    )
}

/// Ten players on build R1, only `r1-0` a tank; `extra` more R1 tanks.
fn r1(extra: usize) -> Vec<Search> {
    (0..10 + extra)
        .map(|i| {
            let roles: &[&str] = if i == 0 || i >= 10 {
                &["tank"]
            } else {
                &["healer", "dps"]
            };
            one(
                &format!("r1-{i}"),
                1000.0 + 2.0 * i as f64,
                i as f64,
                "R1",
                roles,
                &[],
            )
        })
        .collect()
}

/// Eleven players on build R2 between the R1 players' ratings, listing
/// `roles`.
fn r2(roles: &[&str]) -> Vec<Search> {
    (0..11)
        .map(|i| {
            one(
                &format!("r2-{i}"),
                1001.0 + 2.0 * i as f64,
                0.5 + i as f64,
                "R2",
                roles,
                &[],
            )
        })
        .collect()
}

fn reasons_of(config: &GameModeConfig, pool: &[Search], prefix: &str) -> Vec<WaitingReason> {
    let out = cycle(config, pool, 20.0);
    assert!(out.matches.is_empty(), "{:?}", teams_of(&out));
    let reasons: Vec<WaitingReason> = out
        .waiting
        .iter()
        .filter(|w| w.player_id.starts_with(prefix))
        .map(|w| w.reason.clone())
        .collect();
    assert!(!reasons.is_empty());
    reasons
}

fn short_tank() -> WaitingReason {
    let short: BTreeMap<String, u32> = [("tank".to_string(), 1)].into();
    WaitingReason::NoRoleSeating { short }
}

fn rule_not_met(reason: &WaitingReason, name: &str) -> bool {
    matches!(reason, WaitingReason::RuleNotMet { rule, .. } if rule == name)
}

#[test]
fn a_group_short_of_a_tank_alone_in_the_pool_says_so() {
    for fifo in [false, true] {
        let reasons = reasons_of(&mode(fifo), &r1(0), "r1-");
        assert!(reasons.iter().all(|r| *r == short_tank()), "{reasons:?}");
    }
}

#[test]
fn players_a_rule_turned_away_that_could_take_no_empty_seat_do_not_name_it() {
    for fifo in [false, true] {
        let mut pool = r1(0);
        pool.extend(r2(&["healer", "dps"]));
        let out = cycle(&mode(fifo), &pool, 20.0);
        assert!(out.matches.is_empty());
        for w in out
            .waiting
            .iter()
            .filter(|w| w.player_id.starts_with("r1-"))
        {
            assert_eq!(w.reason, short_tank(), "fifo {fifo}: {}", w.player_id);
            assert_eq!((w.found, w.needed), (9, 10), "{}", w.player_id);
        }
    }
}

/// Nine R1 players, one tank: every one of them finds a seat, nobody is
/// refused for want of one, and the R2 players the build rule turns away
/// could take no empty seat either: they wait for a tank.
#[test]
fn a_group_nobody_was_refused_a_seat_in_waits_for_its_empty_roles() {
    for fifo in [false, true] {
        let mut pool = r1(0);
        pool.pop();
        pool.extend(r2(&["healer", "dps"]));
        let reasons = reasons_of(&mode(fifo), &pool, "r1-");
        assert!(
            reasons.iter().all(|r| *r == short_tank()),
            "fifo {fifo}: {reasons:?}"
        );
        // A tank of the other build is what the rule keeps out.
        let mut pool = r1(0);
        pool.pop();
        pool.extend(r2(&["tank"]));
        let reasons = reasons_of(&mode(fifo), &pool, "r1-");
        assert!(
            reasons.iter().all(|r| rule_not_met(r, "same-build")),
            "fifo {fifo}: {reasons:?}"
        );
    }
}

#[test]
fn a_rule_that_turned_away_a_player_of_an_empty_seat_is_named() {
    for fifo in [false, true] {
        let reasons = reasons_of(&mode(fifo), &[r1(0), r2(&["tank"])].concat(), "r1-");
        assert!(
            reasons.iter().all(|r| rule_not_met(r, "same-build")),
            "fifo {fifo}: {reasons:?}"
        );
    }
}

/// Eleven R1 players, one tank, two healers-or-dps blocking each other.
fn blocked_pair(extra_tanks: usize) -> Vec<Search> {
    let mut pool = r1(extra_tanks);
    pool.push(one(
        "r1-b",
        1005.0,
        0.2,
        "R1",
        &["healer", "dps"],
        &["r1-3"],
    ));
    pool
}

#[test]
fn a_block_pair_does_not_hide_the_missing_tank() {
    for fifo in [false, true] {
        let reasons = reasons_of(&mode(fifo), &blocked_pair(0), "r1-");
        assert_eq!(reasons.len(), 11);
        assert!(
            reasons.iter().all(|r| *r == short_tank()),
            "fifo {fifo}: {reasons:?}"
        );
        // One more tank, and they match at once.
        let out = cycle(&mode(fifo), &blocked_pair(1), 20.0);
        assert_eq!(out.matches.len(), 1, "fifo {fifo}");
    }
}

/// The `equal` rule turned away more players, but none of them could tank:
/// the `avoid` rule, which kept the second tank out, is the one named.
#[test]
fn the_rule_named_is_one_that_turned_away_a_player_of_an_empty_seat() {
    for fifo in [false, true] {
        let mut pool = r1(1);
        // The two R1 tanks block each other.
        pool[0] = one("r1-0", 1000.0, 0.0, "R1", &["tank"], &["r1-10"]);
        pool.extend(r2(&["healer", "dps"]));
        let reasons = reasons_of(&mode(fifo), &pool, "r1-");
        assert!(
            reasons.iter().all(|r| rule_not_met(r, "no-blocked")),
            "fifo {fifo}: {reasons:?}"
        );
    }
}
