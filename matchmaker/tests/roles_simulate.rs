//! Role queues in the simulator (docs/rules.md, "Simulating a role
//! queue"): the example scenario's report counts every seated player under
//! its role, and each team holds its role seats.
#![allow(clippy::unwrap_used)]

use matchplane_matchmaker::simulate::{parse_arrivals_csv, run, Scenario};
use std::collections::BTreeMap;

fn example() -> Scenario {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/../examples/roles.json")).unwrap();
    let csv = std::fs::read_to_string(format!("{root}/../examples/roles-arrivals.csv")).unwrap();
    let mut scenario = Scenario::parse(&text).unwrap();
    let events = parse_arrivals_csv(&csv, scenario.game_mode.regions.as_ref()).unwrap();
    scenario.add_events(events, "arrivalsCsv").unwrap();
    scenario
}

#[test]
fn the_report_counts_players_and_waits_per_role() {
    let report = run(&example());
    let roles = &report.stats.roles;
    assert!(report.stats.matches > 100, "{}", report.stats.matches);

    // Every seated player is counted once, under the role it sat in.
    let mut seated: BTreeMap<String, usize> = BTreeMap::new();
    for m in &report.matches {
        for team in 0..2 {
            let mut per_role: BTreeMap<&str, u32> = BTreeMap::new();
            for p in m.players.iter().filter(|p| p.team == team) {
                let role = p.role.as_deref().unwrap();
                *per_role.entry(role).or_default() += 1;
                *seated.entry(role.to_owned()).or_default() += 1;
            }
            // One tank and two damage on every team; the relax step may
            // turn a support seat into an `any` seat.
            assert_eq!(per_role.get("tank"), Some(&1), "{per_role:?}");
            assert_eq!(per_role.get("damage"), Some(&2), "{per_role:?}");
            let support = per_role.get("support").copied().unwrap_or(0);
            let any = per_role.get("any").copied().unwrap_or(0);
            assert!(
                (support, any) == (2, 0) || (support, any) == (1, 1),
                "{per_role:?}"
            );
        }
    }
    let counted: BTreeMap<String, usize> = roles
        .iter()
        .map(|(role, r)| (role.clone(), r.matched_players))
        .collect();
    assert_eq!(counted, seated);
    assert_eq!(
        roles.values().map(|r| r.matched_players).sum::<usize>(),
        report.stats.matched_players
    );
    assert_eq!(roles["tank"].matches, report.stats.matches);
    assert_eq!(roles["tank"].matched_players, 2 * report.stats.matches);
    // Damage, the crowded role, waits longest at the median.
    let p50 = |role: &str| roles[role].wait_seconds.p50.unwrap();
    assert!(p50("damage") > p50("tank"), "{roles:?}");
    assert!(p50("damage") > p50("support"), "{roles:?}");
}

#[test]
fn a_mode_without_composition_has_no_role_figures() {
    let mut scenario = example();
    scenario.game_mode.composition = None;
    let report = run(&scenario);
    assert!(report.stats.roles.is_empty());
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["stats"].get("roles").is_none());
    assert!(json["matches"][0]["players"][0].get("role").is_none());
}

/// A bot match whose bots may not be replaced: when a player leaves, the
/// backfill opens only that player's seat and role; a newcomer of a bot's
/// role is not seated beside the bot (a team of two damage and no tank),
/// and a newcomer of the left player's role is.
#[test]
fn a_kept_bot_keeps_its_role_seat_from_a_backfill() {
    let scenario = |newcomer: &str| {
        let text = serde_json::json!({
            "gameMode": {"name": "bt", "matchShape": [3, 3], "matchmakingCycleDurationSeconds": 1,
                "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5,
                              "expansionMultiplier": 1},
                "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}},
                "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1, "support": 1}},
                "bots": {"fillAfterSeconds": 2, "minHumans": 2, "replaceable": false},
                "backfill": {"enabled": true, "ttlSeconds": 60}},
            "until": 30, "seed": 1,
            "arrivals": [
                {"at": 0, "playerId": "a", "mmr": 1500, "attributes": {"roles": ["tank"]}},
                {"at": 0, "playerId": "b", "mmr": 1500, "attributes": {"roles": ["tank"]}},
                {"at": 0, "playerId": "c", "mmr": 1500, "attributes": {"roles": ["tank", "support"]}},
                {"at": 10, "leave": ["a"]},
                {"at": 12, "playerId": "d", "mmr": 1500, "attributes": {"roles": [newcomer]}}
            ]
        });
        run(&Scenario::parse(&text.to_string()).unwrap())
    };
    let report = scenario("damage");
    assert_eq!(report.matches.len(), 1);
    // The bot match seats a (tank) and c (support) beside a damage bot.
    let bot_roles: Vec<_> = report.matches[0]
        .players
        .iter()
        .filter(|p| p.bot && p.team == 0)
        .map(|p| p.role.clone())
        .collect();
    assert_eq!(bot_roles, [Some("damage".into())]);
    assert_eq!(report.backfills.len(), 1);
    assert!(
        report.backfills[0].fills.is_empty(),
        "{:?}",
        report.backfills[0]
    );
    assert_eq!(report.unmatched, ["d"]);

    let report = scenario("tank");
    assert_eq!(
        report.backfills[0].fills.len(),
        1,
        "{:?}",
        report.backfills[0]
    );
    assert!(report.unmatched.is_empty());
}
