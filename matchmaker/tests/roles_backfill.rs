//! Backfill by role (docs/rules.md, "Backfill by role"): a fill seats each
//! newcomer in an open role of its team that it listed (or an open `any`
//! seat), parties whole, and the role seats it leaves are the open ones
//! minus those it took.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::backfill::fill_pass;
use matchplane_matchmaker::roles::open::{open_roles, OpenRoles};
use matchplane_matchmaker::{BackfillConfig, GameModeConfig, OpenBackfill, Party, Search};
use proptest::prelude::*;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};

/// A `[5,5]` FIFO role queue (1 tank, 2 damage, 2 support), backfill on.
fn mode(keep_together: bool) -> GameModeConfig {
    let mut c = with_parties(fifo_mode(&[5, 5]), 3, keep_together);
    c.attributes = serde_json::from_value(json!({
        "roles": {"type": "stringSet", "values": ROLES}
    }))
    .unwrap();
    c.composition = Some(
        serde_json::from_value(json!({"attribute": "roles",
            "perTeam": {"tank": 1, "damage": 2, "support": 2}}))
        .unwrap(),
    );
    c.backfill = Some(BackfillConfig::default());
    c
}

/// A backfill whose teams hold `held[t]` (role names).
fn backfill(config: &GameModeConfig, held: &[Vec<&str>]) -> OpenBackfill {
    let open = open_roles(config.composition.as_ref().unwrap(), held).unwrap();
    OpenBackfill {
        backfill_id: "bf_1".into(),
        match_id: "mat_1".into(),
        revision: 1,
        open_seats: held.iter().map(|h| 5 - h.len() as u32).collect(),
        opened_at: 0.0,
        expires_at: 1000.0,
        mean_mmr: None,
        pings: Vec::new(),
        region: None,
        roster: Default::default(),
        open_roles: open,
    }
}

fn listing(id: &str, at: f64, roles: &[&str]) -> Search {
    let mut s = solo(id, 1000.0, at);
    s.attributes = serde_json::from_value(json!({ "roles": roles })).unwrap();
    s
}

/// Each newcomer of the pass's only fill: (team, player, role).
fn seated(
    config: &GameModeConfig,
    pool: &[Search],
    b: &OpenBackfill,
) -> Vec<(usize, String, String)> {
    let out = fill_pass(config, pool, std::slice::from_ref(b), 10.0);
    let mut seated: Vec<(usize, String, String)> = out
        .fills
        .iter()
        .flat_map(|f| &f.teams)
        .flat_map(|t| {
            t.players.iter().map(move |p| {
                (
                    t.index,
                    p.player_id.to_string(),
                    p.role.as_deref().unwrap_or("-").to_owned(),
                )
            })
        })
        .collect();
    seated.sort();
    seated
}

#[test]
fn a_fill_takes_only_players_willing_to_play_an_open_role() {
    let config = mode(true);
    // Team 0 lacks its tank, team 1 a support; the longest-waiting
    // player plays damage only and waits.
    let b = backfill(
        &config,
        &[
            vec!["damage", "damage", "support", "support"],
            vec!["tank", "damage", "damage", "support"],
        ],
    );
    let pool = vec![
        listing("dps", 0.0, &["damage"]),
        listing("healer", 1.0, &["support"]),
        listing("tank", 2.0, &["tank"]),
    ];
    assert_eq!(
        seated(&config, &pool, &b),
        vec![
            (0, "tank".into(), "tank".into()),
            (1, "healer".into(), "support".into())
        ]
    );
    let out = fill_pass(&config, &pool, &[b], 10.0);
    let fill = &out.fills[0];
    assert_eq!(fill.open_seats_left, vec![0, 0]);
    assert!(fill
        .open_roles_left
        .iter()
        .all(|t| t.values().all(|n| *n == 0)));
    // Counters as the pool store keeps them: seats, then roles by name
    // (any, damage, support, tank) per team.
    assert_eq!(fill.seats_taken(), vec![1, 1]);
    assert_eq!(fill.roles_taken(), vec![0, 0, 0, 1, 0, 0, 1, 0]);
}

#[test]
fn a_flexible_player_moves_to_the_role_a_later_one_needs() {
    let config = mode(true);
    let b = backfill(
        &config,
        &[
            vec!["damage", "support", "support"],
            vec!["tank", "damage", "damage", "support", "support"],
        ],
    );
    // Tank and damage open on team 0: the flexible player came first, and
    // the tank-only player still gets the tank seat.
    let pool = vec![
        listing("flex", 0.0, &["tank", "damage"]),
        listing("tank", 1.0, &["tank"]),
    ];
    assert_eq!(
        seated(&config, &pool, &b),
        vec![
            (0, "flex".into(), "damage".into()),
            (0, "tank".into(), "tank".into())
        ]
    );
}

#[test]
fn a_party_goes_to_a_team_whose_open_roles_seat_all_of_it() {
    let config = mode(true);
    // Team 0 has tank and support open, team 1 tank and damage: the
    // tank-and-damage party fits team 1 only.
    let b = backfill(
        &config,
        &[
            vec!["damage", "damage", "support"],
            vec!["damage", "support", "support"],
        ],
    );
    let mut pool = vec![listing("a", 0.0, &["tank"]), listing("b", 0.0, &["damage"])];
    for s in &mut pool {
        s.party = Some(Party {
            id: "duo".into(),
            members: vec!["a".into(), "b".into()],
        });
    }
    assert_eq!(
        seated(&config, &pool, &b),
        vec![
            (1, "a".into(), "tank".into()),
            (1, "b".into(), "damage".into())
        ]
    );
    // With only team 0's seats open, nobody is taken.
    let b = backfill(
        &config,
        &[
            vec!["damage", "damage", "support"],
            vec!["tank", "damage", "damage", "support", "support"],
        ],
    );
    assert!(seated(&config, &pool, &b).is_empty());
}

#[test]
fn an_any_seat_takes_whoever_has_no_seat_of_their_own() {
    let mut config = mode(true);
    config.composition = Some(
        serde_json::from_value(json!({"attribute": "roles",
            "perTeam": {"tank": 1, "damage": 2, "support": 1, "any": 1}}))
        .unwrap(),
    );
    let b = backfill(
        &config,
        &[
            vec!["tank", "damage", "damage", "support"],
            vec!["tank", "damage", "damage", "support", "any"],
        ],
    );
    let pool = vec![listing("second-tank", 0.0, &["tank"])];
    assert_eq!(
        seated(&config, &pool, &b),
        vec![(0, "second-tank".into(), "any".into())]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_fill_seats_listed_open_roles_and_leaves_the_rest(
        keep_together in any::<bool>(),
        rosters in prop::array::uniform2(prop::collection::vec(0usize..3, 0..=5)),
        parties in prop::collection::vec((1usize..=3, prop::collection::vec(1u8..8, 1..=3)), 1..12),
    ) {
        let config = mode(keep_together);
        // A roster of up to 5 roles per team, trimmed to what perTeam seats.
        let per_team: BTreeMap<&str, usize> = [("damage", 2), ("support", 2), ("tank", 1)].into();
        let held: Vec<Vec<&str>> = rosters.iter().map(|r| {
            let mut count: HashMap<&str, usize> = HashMap::new();
            r.iter().map(|i| ROLES[*i]).filter(|role| {
                let n = count.entry(role).or_insert(0);
                *n += 1;
                *n <= per_team[role]
            }).collect()
        }).collect();
        prop_assume!(held.iter().any(|h| h.len() < 5));
        let b = backfill(&config, &held);
        let parties: Vec<_> = parties.into_iter().map(|(size, masks)| (size, 0, masks)).collect();
        let pool = role_pool(&parties);
        let listed: HashMap<String, Vec<String>> = pool.iter().map(|s| {
            let Some(matchplane_matchmaker::rules::AttributeValue::Set(r)) = s.attributes.get("roles") else { unreachable!() };
            (s.player_id.to_string(), r.clone())
        }).collect();
        let out = fill_pass(&config, &pool, std::slice::from_ref(&b), 10.0);
        prop_assert!(out.fills.len() <= 1);
        for fill in &out.fills {
            let mut left: Vec<OpenRoles> = b.open_roles.clone();
            let mut party_team: HashMap<String, usize> = HashMap::new();
            for t in &fill.teams {
                for p in &t.players {
                    let role = p.role.as_deref().expect("a role").to_owned();
                    prop_assert!(role == "any" || listed[p.player_id.as_str()].contains(&role),
                        "{} seated as {role}, listed {:?}", p.player_id, listed[p.player_id.as_str()]);
                    let n = left[t.index].get_mut(&role).expect("an open role of the team");
                    prop_assert!(*n > 0, "role {role} of team {} taken twice", t.index);
                    *n -= 1;
                    if keep_together {
                        if let Some(pid) = &p.party_id {
                            let at = *party_team.entry(pid.to_string()).or_insert(t.index);
                            prop_assert_eq!(at, t.index, "party {} split", pid);
                        }
                    }
                }
            }
            prop_assert_eq!(&fill.open_roles_left, &left);
            // Parties whole: every member of a taken party is in the fill.
            let ids: Vec<&str> = fill.ticket_ids();
            for s in &pool {
                if let Some(party) = &s.party {
                    let taken = party.members.iter().filter(|m| ids.iter().any(|i| pool.iter().any(|s| s.ticket_id.as_str() == *i && s.player_id.as_str() == m.as_str()))).count();
                    prop_assert!(taken == 0 || taken == party.members.len());
                }
            }
            // The store's counters: what the fill takes leaves what it says.
            let taken: Vec<u32> = fill.seats_taken().into_iter().chain(fill.roles_taken()).collect();
            let mut after = b.clone();
            let counters: Vec<u32> = b.seat_counters().iter().zip(&taken).map(|(o, t)| o - t).collect();
            prop_assert!(after.set_seat_counters(&counters));
            prop_assert_eq!(&after.open_seats, &fill.open_seats_left);
            prop_assert_eq!(&after.open_roles, &fill.open_roles_left);
        }
    }
}

mod roster_roles {
    use super::*;
    use matchplane_matchmaker::backfill::roster::{check_roster_roles, Roster};

    fn roster(teams: serde_json::Value) -> Roster {
        serde_json::from_value(json!({ "teams": teams })).unwrap()
    }

    #[test]
    fn the_roster_roles_give_each_team_its_open_roles() {
        let config = mode(true);
        let r = roster(json!([
            {"index": 0, "players": [{"playerId": "a", "role": "tank"}, {"playerId": "b"}]},
            {"index": 1, "players": [{"playerId": "c", "role": "any"}]}]));
        // `b` was seated by matchplane as damage; `any` fits no seat of
        // perTeam, and the mode has no relax step: refused.
        let known = |id: &str| (id == "b").then(|| "damage".to_owned());
        let err =
            check_roster_roles(config.composition.as_ref(), &[5, 5], &r, &[], known).unwrap_err();
        assert_eq!(err[0].field, "teams[1].players");
        let r = roster(json!([
            {"index": 0, "players": [{"playerId": "a", "role": "tank"}, {"playerId": "b"}]}]));
        let open =
            check_roster_roles(config.composition.as_ref(), &[5, 5], &r, &[], known).unwrap();
        assert_eq!(
            open[0],
            [("any", 0), ("damage", 1), ("support", 2), ("tank", 0)]
                .into_iter()
                .map(|(r, n)| (r.to_owned(), n))
                .collect::<OpenRoles>()
        );
        assert_eq!(open[1].values().sum::<u32>(), 5);
    }

    #[test]
    fn every_bad_role_is_named() {
        let config = mode(true);
        let r = roster(json!([
            {"index": 0, "players": [{"playerId": "a", "role": "healer"}, {"playerId": "b"}]}]));
        let err = check_roster_roles(config.composition.as_ref(), &[5, 5], &r, &[], |_| None)
            .unwrap_err();
        let fields: Vec<&str> = err.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["teams[0].players[0].role", "teams[0].players[1].role"]
        );
        assert!(err
            .iter()
            .all(|e| e.code == matchplane_matchmaker::Code::InvalidRoster));
        // A role in a mode without composition is refused, not ignored.
        let err = check_roster_roles(None, &[5, 5], &r, &[], |_| None).unwrap_err();
        assert_eq!(err[0].field, "teams[0].players[0].role");
        let plain = roster(json!([{"index": 0, "players": [{"playerId": "a"}]}]));
        assert_eq!(
            check_roster_roles(None, &[5, 5], &plain, &[], |_| None),
            Ok(Vec::new())
        );
    }
}

/// `simulate` with a leave in a role queue: the leaver's role seat opens,
/// and the next cycle fills it with a player of that role, not with one
/// who waited longer for another.
#[test]
fn simulate_fills_a_leavers_role_seat_by_role() {
    use matchplane_matchmaker::simulate::{run, Scenario};
    let text = json!({
        "gameMode": {"name": "roles", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"},
            "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage"]}},
            "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}},
            "backfill": {"ttlSeconds": 60}},
        "tier": "enterprise", "seed": 1, "until": 40,
        "arrivals": [
            {"at": 0, "playerId": "t1", "attributes": {"roles": ["tank"]}},
            {"at": 0, "playerId": "t2", "attributes": {"roles": ["tank"]}},
            {"at": 0, "playerId": "d1", "attributes": {"roles": ["damage"]}},
            {"at": 0, "playerId": "d2", "attributes": {"roles": ["damage"]}},
            {"at": 5, "playerId": "d3", "attributes": {"roles": ["damage"]}},
            {"at": 10, "leave": ["t1"]},
            {"at": 12, "playerId": "t3", "attributes": {"roles": ["tank"]}}
        ]
    });
    let report = run(&Scenario::parse(&text.to_string()).unwrap());
    assert_eq!(report.backfills.len(), 1);
    let fills = &report.backfills[0].fills;
    assert_eq!(fills.len(), 1, "{fills:?}");
    assert_eq!(
        (fills[0].at, fills[0].players.clone()),
        (12.0, vec!["t3".to_string()])
    );
}
