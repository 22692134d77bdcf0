//! Role queues in the cycle (docs/rules.md, "Role queues"): groups are
//! grown only with joiners that keep a role seating possible, seated into
//! exactly the role seats, and `relax` steps replace `perTeam`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::{GameModeConfig, Search, WaitingReason};
use serde_json::json;
use std::collections::BTreeMap;

/// An MMR mode of `shape` whose teams have `per_team` role seats.
fn roles_mode(
    shape: &[u32],
    per_team: serde_json::Value,
    relax: serde_json::Value,
) -> GameModeConfig {
    let mut c = mmr_mode(shape, 50.0, 2.0);
    c.attributes = serde_json::from_value(json!({
        "roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}
    }))
    .unwrap();
    c.composition = Some(
        serde_json::from_value(json!({"attribute": "roles", "perTeam": per_team, "relax": relax}))
            .unwrap(),
    );
    c
}

fn roled(id: &str, mmr: f64, at: f64, roles: &[&str]) -> Search {
    player(id, mmr, at, json!({ "roles": roles }))
}

fn role_of(m: &matchplane_matchmaker::ProposedMatch, id: &str) -> String {
    m.teams
        .iter()
        .flat_map(|t| &t.players)
        .find(|p| p.player_id.as_str() == id)
        .and_then(|p| p.role.as_ref())
        .map(|r| r.to_string())
        .unwrap_or_default()
}

#[test]
fn a_joiner_that_breaks_the_roles_is_passed_over_and_a_further_one_completes_the_group() {
    let config = roles_mode(&[2, 2], json!({"tank": 1, "damage": 1}), json!([]));
    let pool = vec![
        roled("a", 1000.0, 0.0, &["tank"]),
        roled("b", 1001.0, 1.0, &["damage"]),
        roled("c", 1002.0, 2.0, &["damage"]),
        roled("d", 1003.0, 3.0, &["damage"]),
        roled("e", 1040.0, 4.0, &["tank"]),
    ];
    let out = cycle(&config, &pool, 10.0);
    assert_eq!(out.matches.len(), 1, "{out:?}");
    let m = &out.matches[0];
    let mut ids: Vec<String> = teams_of(&out)[0].concat();
    ids.sort();
    assert!(
        ids.contains(&"e".to_string()),
        "the far tank completes it: {ids:?}"
    );
    for team in &m.teams {
        let mut roles: Vec<String> = team
            .players
            .iter()
            .map(|p| p.role.as_ref().unwrap().to_string())
            .collect();
        roles.sort();
        assert_eq!(roles, ["damage", "tank"]);
    }
    assert_eq!(role_of(m, "a"), "tank");
    assert_eq!(role_of(m, "e"), "tank");
    let text = serde_json::to_value(&m.teams[0].players[0]).unwrap();
    assert!(text["role"].is_string(), "{text}");
}

#[test]
fn players_without_a_seating_wait_with_the_roles_their_group_lacked() {
    let config = roles_mode(&[2, 2], json!({"tank": 1, "damage": 1}), json!([]));
    let pool: Vec<Search> = (0..5)
        .map(|i| {
            roled(
                &format!("p{i}"),
                1000.0 + f64::from(i),
                f64::from(i),
                &["damage"],
            )
        })
        .collect();
    let out = cycle(&config, &pool, 10.0);
    assert!(out.matches.is_empty());
    let first = out
        .waiting
        .iter()
        .find(|w| w.player_id.as_str() == "p0")
        .unwrap();
    let short: BTreeMap<String, u32> = [("tank".to_string(), 2)].into();
    assert_eq!(first.reason, WaitingReason::NoRoleSeating { short });
    let text = serde_json::to_value(&first.reason).unwrap();
    assert_eq!(
        text,
        json!({"code": "NO_ROLE_SEATING", "short": {"tank": 2}})
    );
}

#[test]
fn a_relax_step_replaces_per_team_once_the_anchor_has_waited() {
    let config = roles_mode(
        &[2, 2],
        json!({"tank": 1, "damage": 1}),
        json!([{"afterSeconds": 60, "perTeam": {"damage": 1, "any": 1}}]),
    );
    let pool: Vec<Search> = (0..4)
        .map(|i| roled(&format!("p{i}"), 1000.0 + f64::from(i), 0.0, &["damage"]))
        .collect();
    assert!(cycle(&config, &pool, 59.0).matches.is_empty());
    let out = cycle(&config, &pool, 61.0);
    assert_eq!(out.matches.len(), 1, "{out:?}");
    for team in &out.matches[0].teams {
        let mut roles: Vec<String> = team
            .players
            .iter()
            .map(|p| p.role.as_ref().unwrap().to_string())
            .collect();
        roles.sort();
        assert_eq!(roles, ["any", "damage"]);
    }
}

#[test]
fn modes_without_composition_give_no_role() {
    let config = mmr_mode(&[1, 1], 50.0, 2.0);
    let out = cycle(
        &config,
        &[solo("a", 1000.0, 0.0), solo("b", 1001.0, 0.0)],
        5.0,
    );
    let p = &out.matches[0].teams[0].players[0];
    assert_eq!(p.role, None);
    assert!(serde_json::to_value(p).unwrap().get("role").is_none());
}

#[test]
fn kept_together_parties_sit_whole_in_role_seats() {
    let mut config = roles_mode(
        &[3, 3],
        json!({"tank": 1, "damage": 1, "support": 1}),
        json!([]),
    );
    config = with_parties(config, 2, true);
    // A duo of two tanks can never sit on one team (no step has two tank
    // seats): it fails at the re-check instead of waiting.
    let mut pool = vec![];
    let mut duo = party("duo", 2, 1000.0, 0.0);
    for s in &mut duo {
        s.attributes = serde_json::from_value(json!({"roles": ["tank"]})).unwrap();
    }
    pool.extend(duo);
    let mut flex = party("flex", 2, 1001.0, 1.0);
    flex[0].attributes = serde_json::from_value(json!({"roles": ["tank"]})).unwrap();
    flex[1].attributes = serde_json::from_value(json!({"roles": ["damage", "support"]})).unwrap();
    pool.extend(flex);
    pool.push(roled("t", 1002.0, 2.0, &["tank"]));
    pool.push(roled("d", 1003.0, 2.0, &["damage"]));
    pool.push(roled("s1", 1004.0, 2.0, &["support"]));
    pool.push(roled("s2", 1005.0, 2.0, &["support"]));
    let out = cycle(&config, &pool, 10.0);
    assert_eq!(out.matches.len(), 1, "{out:?}");
    let ids: Vec<String> = teams_of(&out)[0].concat();
    assert!(!ids.iter().any(|i| i.starts_with("duo")), "{ids:?}");
    let failed: Vec<(&str, matchplane_matchmaker::Code)> = out
        .failed
        .iter()
        .map(|f| (f.player_id.as_str(), f.code))
        .collect();
    assert_eq!(
        failed,
        [
            ("duo-0", matchplane_matchmaker::Code::PartyAttributesDiffer),
            ("duo-1", matchplane_matchmaker::Code::PartyAttributesDiffer)
        ],
        "{out:?}"
    );
    // With an `any` seat in a relax step, the same duo may wait for it.
    let mut relaxed = config.clone();
    if let Some(c) = relaxed.composition.as_mut() {
        c.relax = serde_json::from_value(
            json!([{"afterSeconds": 60, "perTeam": {"tank": 1, "damage": 1, "any": 1}}]),
        )
        .unwrap();
    }
    assert!(cycle(&relaxed, &pool, 10.0).failed.is_empty());
    let m = &out.matches[0];
    let team_of = |id: &str| {
        m.teams
            .iter()
            .position(|t| t.players.iter().any(|p| p.player_id.as_str() == id))
            .unwrap()
    };
    assert_eq!(team_of("flex-0"), team_of("flex-1"));
    for team in &m.teams {
        let mut roles: Vec<String> = team
            .players
            .iter()
            .map(|p| p.role.as_ref().unwrap().to_string())
            .collect();
        roles.sort();
        assert_eq!(roles, ["damage", "support", "tank"]);
    }
}

#[test]
fn the_pool_view_counts_waiting_searches_by_each_role_listed() {
    let config = roles_mode(&[2, 2], json!({"tank": 1, "damage": 1}), json!([]));
    let pool = vec![
        roled("a", 1000.0, 0.0, &["damage"]),
        roled("b", 1001.0, 1.0, &["damage", "support"]),
        roled("c", 1002.0, 2.0, &["damage"]),
    ];
    let out = cycle(&config, &pool, 10.0);
    let counts: BTreeMap<String, u32> =
        [("damage".to_string(), 3), ("support".to_string(), 1)].into();
    assert_eq!(out.waiting_by_role, counts);
    let summary = matchplane_matchmaker::pool_summary::PoolSummary::of(&pool, &out);
    assert_eq!(summary.waiting_by_role.get("damage"), Some(&3));
    assert!(
        cycle(&mmr_mode(&[1, 1], 5.0, 2.0), &[solo("x", 1.0, 0.0)], 1.0)
            .waiting_by_role
            .is_empty()
    );
}

#[test]
fn a_search_with_an_empty_role_list_fails_at_the_re_check() {
    let config = roles_mode(&[1, 1], json!({"damage": 1}), json!([]));
    let pool = vec![
        roled("a", 1000.0, 0.0, &["damage"]),
        roled("b", 1001.0, 0.0, &[]),
    ];
    let out = cycle(&config, &pool, 5.0);
    assert!(out.matches.is_empty());
    assert_eq!(out.failed.len(), 1, "{out:?}");
    assert_eq!(out.failed[0].ticket_id.as_str(), "tkt_b");
    assert_eq!(
        out.failed[0].code,
        matchplane_matchmaker::Code::AttributeNotAllowed
    );
    // Worded as every value the changed declarations refuse.
    assert!(
        out.failed[0]
            .message
            .starts_with("the game mode's declarations no longer allow attribute roles: "),
        "{}",
        out.failed[0].message
    );
}

#[test]
fn a_walk_passes_over_a_bounded_number_of_candidates_for_their_roles() {
    // [1,1] with one tank seat per team (damage seats only after 600 s,
    // support seats after 1200 s): 16 damage and support players,
    // alternating (8 per seat; each starts a run of its own role lists),
    // sit between the anchor and the only other tank.
    let config = roles_mode(
        &[1, 1],
        json!({"tank": 1}),
        json!([
            {"afterSeconds": 600, "perTeam": {"damage": 1}},
            {"afterSeconds": 1200, "perTeam": {"support": 1}}
        ]),
    );
    let mut pool = vec![roled("anchor", 1000.0, 0.0, &["tank"])];
    for i in 0..16 {
        let role = if i % 2 == 0 { "damage" } else { "support" };
        pool.push(roled(&format!("d{i}"), 1001.0 + f64::from(i), 1.0, &[role]));
    }
    pool.push(roled("far", 1030.0, 1.0, &["tank"]));
    let out = cycle(&config, &pool, 5.0);
    assert!(out.matches.is_empty(), "{out:?}");
    // One player fewer, and the far tank is reached.
    pool.remove(1);
    let out = cycle(&config, &pool, 5.0);
    assert_eq!(out.matches.len(), 1);
}

#[test]
fn a_crowd_of_one_role_between_the_players_a_group_needs_does_not_end_the_walk() {
    // [5,5], one tank, two damage, two support seats a team: two tanks at
    // 1500, the damage players at 1540, four supports at 1580. In a long
    // run of players with the same role lists, those past the match's
    // seats count an eighth each, so the tank's walk reaches the supports
    // past hundreds of damage players (it used to end after 80).
    let config = roles_mode(
        &[5, 5],
        json!({"tank": 1, "damage": 2, "support": 2}),
        json!([]),
    );
    for crowd in [85, 300, 500] {
        let mut pool = vec![
            roled("t0", 1500.0, 0.0, &["tank"]),
            roled("t1", 1500.0, 0.0, &["tank"]),
        ];
        for i in 0..crowd {
            pool.push(roled(&format!("d{i}"), 1540.0, 1.0, &["damage"]));
        }
        for i in 0..4 {
            pool.push(roled(&format!("s{i}"), 1580.0, 1.0, &["support"]));
        }
        let out = cycle(&config, &pool, 20.0);
        assert_eq!(out.matches.len(), 1, "{crowd} damage players: {out:?}");
        let m = &out.matches[0];
        for id in ["t0", "t1", "s0", "s1", "s2", "s3"] {
            assert!(
                m.teams
                    .iter()
                    .flat_map(|t| &t.players)
                    .any(|p| p.player_id.as_str() == id),
                "{crowd} damage players: {id} not in {m:?}"
            );
        }
    }
}

#[test]
fn simulate_players_carry_their_role() {
    use matchplane_matchmaker::simulate::{run, Scenario};
    let scenario = json!({
        "gameMode": {
            "name": "roles", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"},
            "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}},
            "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}}
        },
        "until": 5,
        "arrivals": [
            {"at": 0, "playerId": "a", "attributes": {"roles": ["tank"]}},
            {"at": 0, "playerId": "b", "attributes": {"roles": ["damage"]}},
            {"at": 0, "playerId": "c", "attributes": {"roles": ["damage", "tank"]}},
            {"at": 0, "playerId": "d", "attributes": {"roles": ["damage"]}},
            {"at": 0, "playerId": "e", "attributes": {"roles": ["damage"]}}
        ]
    });
    let scenario = Scenario::parse(&scenario.to_string()).unwrap();
    let r = serde_json::to_value(run(&scenario)).unwrap();
    let players = r["matches"][0]["players"].as_array().unwrap();
    assert_eq!(players.len(), 4, "{r}");
    let role = |id: &str| {
        players
            .iter()
            .find(|p| p["playerId"] == id)
            .map(|p| p["role"].clone())
    };
    assert_eq!(role("a"), Some(json!("tank")));
    assert_eq!(
        role("c"),
        Some(json!("tank")),
        "c is the only other tank: {r}"
    );
    assert_eq!(
        r["unmatchedReasons"]["e"]["code"], "NOT_ENOUGH_PLAYERS",
        "{r}"
    );
}

/// A `[3, 3]` role queue of one seat of each role, with bots after 60 s
/// once two humans are found.
fn bot_mode() -> GameModeConfig {
    let mut config = roles_mode(
        &[3, 3],
        json!({"tank": 1, "damage": 1, "support": 1}),
        json!([]),
    );
    config.bots = Some(matchplane_matchmaker::Bots {
        fill_after_seconds: 60.0,
        min_humans: 2,
        replaceable: false,
    });
    config
}

#[test]
fn bots_fill_the_role_seats_no_human_took() {
    let config = bot_mode();
    let pool = vec![
        roled("t", 1500.0, 0.0, &["tank"]),
        roled("d", 1510.0, 0.0, &["damage"]),
        roled("f", 1520.0, 0.0, &["damage", "support"]),
    ];
    assert!(cycle(&config, &pool, 59.0).matches.is_empty());
    let out = cycle(&config, &pool, 60.0);
    assert_eq!(out.matches.len(), 1, "{:?}", out.waiting);
    let m = &out.matches[0];
    for team in &m.teams {
        assert_eq!(team.bot_roles.len() as u32, team.bots, "{team:?}");
        // Humans and bots together hold exactly the team's role seats.
        let mut seats: BTreeMap<String, u32> = BTreeMap::new();
        for p in &team.players {
            *seats
                .entry(p.role.as_ref().unwrap().to_string())
                .or_default() += 1;
        }
        for r in &team.bot_roles {
            *seats.entry(r.to_string()).or_default() += 1;
        }
        let want: BTreeMap<String, u32> = [("damage", 1), ("support", 1), ("tank", 1)]
            .map(|(r, n)| (r.to_owned(), n))
            .into();
        assert_eq!(seats, want, "{team:?}");
    }
    assert_eq!(m.teams.iter().map(|t| t.bots).sum::<u32>(), 3);
}

#[test]
fn a_bot_match_seats_its_two_tanks_on_two_teams() {
    // Two tanks only and a damage player in a [3, 3] of one seat of each
    // role: the tanks sit apart and no bot takes a tank seat.
    let config = bot_mode();
    let pool = vec![
        roled("t1", 1500.0, 0.0, &["tank"]),
        roled("t2", 1505.0, 0.0, &["tank"]),
        roled("d", 1510.0, 0.0, &["damage"]),
    ];
    let out = cycle(&config, &pool, 60.0);
    assert_eq!(out.matches.len(), 1, "{:?}", out.waiting);
    for team in &out.matches[0].teams {
        let tanks = team
            .players
            .iter()
            .filter(|p| p.role.as_deref() == Some("tank"))
            .count();
        assert_eq!(tanks, 1, "{team:?}");
        assert_eq!(team.players.len() as u32 + team.bots, 3);
        assert!(
            !team.bot_roles.iter().any(|r| r.as_str() == "tank"),
            "{team:?}"
        );
    }
}

#[test]
fn role_waits_count_each_seated_player_by_role_with_its_wait() {
    use matchplane_matchmaker::role_waits::RoleWaits;
    let config = roles_mode(&[2, 2], json!({"tank": 1, "damage": 1}), json!([]));
    // Tanks queued 20 s before the cycle, damage players 170 s to 200 s.
    let pool = vec![
        roled("t1", 1000.0, 280.0, &["tank"]),
        roled("t2", 1001.0, 280.0, &["tank"]),
        roled("d1", 1002.0, 130.0, &["damage"]),
        roled("d2", 1003.0, 100.0, &["damage"]),
    ];
    let out = cycle(&config, &pool, 300.0);
    assert_eq!(out.matches.len(), 1, "{out:?}");
    let roles = RoleWaits::of_matches(&out.matches);
    let names: Vec<&str> = roles.roles().keys().map(String::as_str).collect();
    assert_eq!(names, ["damage", "tank"]);
    assert_eq!(roles.roles()["tank"].matched, 2);
    assert_eq!(roles.roles()["damage"].matched, 2);
    // Both tanks waited 20 s: the (15, 20] bucket.
    let tank = roles.roles()["tank"].wait_quantile(0.5).unwrap();
    assert!((15.0..=20.0).contains(&tank), "{tank}");
    // Damage waited 170 s and 200 s: the median in (150, 180], the p90 in
    // (180, 240].
    let damage = &roles.roles()["damage"];
    let p50 = damage.wait_quantile(0.5).unwrap();
    let p90 = damage.wait_quantile(0.9).unwrap();
    assert!((150.0..=180.0).contains(&p50), "{p50}");
    assert!((180.0..=240.0).contains(&p90), "{p90}");

    // A mode without composition counts nobody.
    let plain = mmr_mode(&[1, 1], 50.0, 2.0);
    let pool = vec![
        player("a", 1000.0, 0.0, json!({})),
        player("b", 1001.0, 0.0, json!({})),
    ];
    let out = cycle(&plain, &pool, 10.0);
    assert_eq!(out.matches.len(), 1, "{out:?}");
    assert!(RoleWaits::of_matches(&out.matches).is_empty());
}

/// Parties `p` and `q` (queued at 5 and 6 s, MMR `parties`) of a tank, a
/// damage and a support player each, then support solos `s0` and `s1`
/// (at 7 and 8 s, MMR `supports`).
fn tank_parties_and_supports(parties: [f64; 2], supports: [f64; 2]) -> Vec<Search> {
    let mut pool = Vec::new();
    for ((p, at), mmr) in [("p", 5.0), ("q", 6.0)].into_iter().zip(parties) {
        let mut members = party(p, 3, mmr, at);
        for (s, role) in members.iter_mut().zip(["tank", "damage", "support"]) {
            s.attributes = serde_json::from_value(json!({ "roles": [role] })).unwrap();
        }
        pool.extend(members);
    }
    pool.push(roled("s0", supports[0], 7.0, &["support"]));
    pool.push(roled("s1", supports[1], 8.0, &["support"]));
    pool
}

#[test]
fn a_long_queue_of_one_role_ahead_of_the_parties_does_not_starve_the_match() {
    // Newcomer trials' pools: 16 to 150 damage players waiting longest,
    // then the two parties that carry the tanks and two support players.
    for fifo in [false, true] {
        // A closeness walk passes over 80 at most (8 a seat): the parties
        // must be among them there.
        let sizes: &[u32] = if fifo {
            &[16, 20, 40, 90, 150]
        } else {
            &[16, 20, 40]
        };
        for &n in sizes {
            let mut config = roles_mode(
                &[5, 5],
                json!({"tank": 1, "damage": 2, "support": 2}),
                json!([]),
            );
            if fifo {
                config.algorithm = fifo_mode(&[5, 5]).algorithm;
            }
            let config = with_parties(config, 3, true);
            let mut pool: Vec<Search> = (0..n)
                .map(|i| roled(&format!("d{i}"), 1500.0, f64::from(i) * 0.1, &["damage"]))
                .collect();
            pool.extend(tank_parties_and_supports(
                [1510.0, 1490.0],
                [1500.0, 1500.0],
            ));
            let out = cycle(&config, &pool, 10.0);
            assert_eq!(
                out.matches.len(),
                1,
                "fifo {fifo}, {n} damage players: {out:?}"
            );
        }
    }
}

#[test]
fn a_fifo_walk_reaches_the_tanks_behind_ninety_damage_players() {
    // A newcomer trial: 90 damage solos queued first, then four tanks and
    // eight support solos (two matches' worth). Each FIFO walk starts at
    // the front of the queue; counted whole, the damage players it passes
    // over ended it before the first tank.
    let mut config = roles_mode(
        &[5, 5],
        json!({"tank": 1, "damage": 2, "support": 2}),
        json!([]),
    );
    config.algorithm = fifo_mode(&[5, 5]).algorithm;
    let mut pool: Vec<Search> = (0..90)
        .map(|i| roled(&format!("d{i}"), 1500.0, f64::from(i) * 0.1, &["damage"]))
        .collect();
    pool.extend((0..4).map(|i| roled(&format!("t{i}"), 1500.0, 20.0, &["tank"])));
    pool.extend((0..8).map(|i| roled(&format!("s{i}"), 1500.0, 21.0, &["support"])));
    let out = cycle(&config, &pool, 30.0);
    assert_eq!(out.matches.len(), 2, "{out:?}");
}

#[test]
fn a_group_the_nearest_joiners_cannot_seat_is_found_among_those_passed_over() {
    // Five damage players waited longest, between the two parties by MMR:
    // the walk from any of them, and from either party, takes damage
    // players first, and then the other party (it brings a fifth damage
    // player) does not fit. The match exists without three of them: both
    // parties, two damage players and the two support players.
    let config = with_parties(
        roles_mode(
            &[5, 5],
            json!({"tank": 1, "damage": 2, "support": 2}),
            json!([]),
        ),
        3,
        true,
    );
    let mut pool: Vec<Search> = (0..5)
        .map(|i| {
            roled(
                &format!("d{i}"),
                1003.0 + f64::from(i),
                f64::from(i),
                &["damage"],
            )
        })
        .collect();
    pool.extend(tank_parties_and_supports(
        [1000.0, 1010.0],
        [1020.0, 1021.0],
    ));
    let out = cycle(&config, &pool, 10.0);
    assert!(out.failed.is_empty(), "{out:?}");
    assert_eq!(out.matches.len(), 1, "{out:?}");
    let mut ids: Vec<String> = teams_of(&out)[0].concat();
    ids.sort();
    assert_eq!(
        ids,
        ["d0", "d1", "p-0", "p-1", "p-2", "q-0", "q-1", "q-2", "s0", "s1"],
        "the longest-waiting damage players and everyone the roles need"
    );
    for team in &out.matches[0].teams {
        let mut roles: Vec<String> = team
            .players
            .iter()
            .map(|p| p.role.as_ref().unwrap().to_string())
            .collect();
        roles.sort();
        assert_eq!(roles, ["damage", "damage", "support", "support", "tank"]);
    }
}
