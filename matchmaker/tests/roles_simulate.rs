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
