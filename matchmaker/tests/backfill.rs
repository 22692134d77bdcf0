//! The backfill pass: whole parties into open seats, the MMR, ping and
//! region rules, oldest backfill first, and the property that open seats
//! never go negative and no party is split or over-seated.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::needless_range_loop)]

mod common;

use common::*;
use matchplane_matchmaker::backfill::fill_pass;
use matchplane_matchmaker::{
    run_cycle_with_backfills, BackfillConfig, GameModeConfig, OpenBackfill, Regions, Search,
};
use proptest::prelude::*;
use rand::SeedableRng;

fn backfill_on(mut c: GameModeConfig) -> GameModeConfig {
    c.backfill = Some(BackfillConfig::default());
    c
}

fn open(id: &str, seats: &[u32], mean: Option<f64>, opened_at: f64) -> OpenBackfill {
    OpenBackfill {
        open_roles: Vec::new(),
        backfill_id: format!("bf_{id}").into(),
        match_id: format!("mat_{id}").into(),
        revision: 1,
        open_seats: seats.to_vec(),
        opened_at,
        expires_at: opened_at + 120.0,
        mean_mmr: mean,
        pings: Vec::new(),
        region: None,
        roster: Default::default(),
    }
}

fn taken_ids(
    config: &GameModeConfig,
    pool: &[Search],
    bfs: &[OpenBackfill],
    now: f64,
) -> Vec<Vec<String>> {
    let out = fill_pass(config, pool, bfs, now);
    out.fills
        .iter()
        .map(|f| {
            let mut ids: Vec<String> = f.ticket_ids().iter().map(|s| s.to_string()).collect();
            ids.sort();
            ids
        })
        .collect()
}

#[test]
fn a_party_of_two_is_never_taken_into_one_open_seat() {
    let config = backfill_on(with_parties(mmr_mode(&[5, 5], 5.0, 2.0), 2, true));
    let pool = party("p", 2, 1500.0, 0.0);
    let out = fill_pass(
        &config,
        &pool,
        &[open("a", &[1, 1], Some(1500.0), 0.0)],
        1.0,
    );
    assert!(out.fills.is_empty(), "{:?}", out.fills);
    // Two seats on one team take it whole.
    let out = fill_pass(
        &config,
        &pool,
        &[open("a", &[1, 2], Some(1500.0), 0.0)],
        1.0,
    );
    assert_eq!(out.fills.len(), 1);
    assert_eq!(out.fills[0].teams.len(), 1);
    assert_eq!(out.fills[0].teams[0].index, 1);
    assert_eq!(out.fills[0].open_seats_left, vec![1, 0]);
}

#[test]
fn without_keep_together_a_party_spreads_over_the_teams() {
    let config = backfill_on(with_parties(mmr_mode(&[5, 5], 5.0, 2.0), 2, false));
    let pool = party("p", 2, 1500.0, 0.0);
    let out = fill_pass(
        &config,
        &pool,
        &[open("a", &[1, 1], Some(1500.0), 0.0)],
        1.0,
    );
    assert_eq!(out.fills.len(), 1);
    assert_eq!(out.fills[0].seats_taken(), vec![1, 1]);
    assert_eq!(out.fills[0].open_seats_left, vec![0, 0]);
}

#[test]
fn mmr_distance_is_within_the_candidates_range_and_the_backfills_aged_range() {
    let config = backfill_on(mmr_mode(&[5, 5], 5.0, 2.0));
    // Range 150 at 0 s, 300 at 10 s (0..3000, 5 %, x2).
    let far = solo("far", 1800.0, 0.0);
    // The candidate waited 10 s (range 300) but the backfill is new (150).
    let bf = open("a", &[1, 0], Some(1550.0), 10.0);
    assert!(taken_ids(
        &config,
        std::slice::from_ref(&far),
        std::slice::from_ref(&bf),
        10.0
    )
    .is_empty());
    // An old backfill (range 300) and a new candidate (150): still no.
    let newcomer = solo("new", 1800.0, 10.0);
    let old = open("b", &[1, 0], Some(1550.0), 0.0);
    assert!(taken_ids(
        &config,
        std::slice::from_ref(&newcomer),
        std::slice::from_ref(&old),
        10.0
    )
    .is_empty());
    // Both aged: 250 <= 300.
    assert_eq!(
        taken_ids(&config, &[far], &[old], 10.0),
        vec![vec!["tkt_far".to_string()]]
    );
}

#[test]
fn ping_is_within_max_delta_of_every_ping_of_the_match() {
    let config = backfill_on(ping_mode(&[2, 2], 30.0));
    let mut bf = open("a", &[1, 0], None, 0.0);
    bf.pings = vec![20.0, 60.0];
    let near = pinged("near", 45.0, 0.0);
    let far = pinged("far", 85.0, 0.0);
    assert_eq!(
        taken_ids(&config, &[far, near], &[bf], 1.0),
        vec![vec!["tkt_near".to_string()]]
    );
}

#[test]
fn regions_need_the_matchs_region_within_the_ceiling() {
    let mut config = backfill_on(mmr_mode(&[2, 2], 5.0, 2.0));
    config.regions = Some(Regions {
        names: None,
        max_latency_ms: 80.0,
        expansion: Vec::new(),
    });
    let mut bf = open("a", &[1, 0], Some(1500.0), 0.0);
    bf.region = Some("eu-west".into());
    let mut eu = solo("eu", 1500.0, 0.0);
    eu.latencies = Some([("eu-west".into(), 40.0)].into_iter().collect());
    let mut us = solo("us", 1500.0, -5.0);
    us.latencies = Some(
        [("us-east".into(), 10.0), ("eu-west".into(), 120.0)]
            .into_iter()
            .collect(),
    );
    let out = fill_pass(&config, &[us, eu], &[bf], 1.0);
    assert_eq!(out.fills[0].ticket_ids(), vec!["tkt_eu"]);
    assert_eq!(out.fills[0].teams[0].players[0].latency_ms, Some(40.0));
}

#[test]
fn the_oldest_backfill_is_served_first_and_candidates_in_wait_order() {
    let config = backfill_on(mmr_mode(&[5, 5], 5.0, 2.0));
    let pool = vec![solo("late", 1500.0, 5.0), solo("early", 1500.0, 1.0)];
    let young = open("young", &[1, 0], Some(1500.0), 3.0);
    let old = open("old", &[1, 0], Some(1500.0), 2.0);
    let out = fill_pass(&config, &pool, &[young, old], 6.0);
    assert_eq!(out.fills[0].backfill_id.as_str(), "bf_old");
    assert_eq!(out.fills[0].ticket_ids(), vec!["tkt_early"]);
    assert_eq!(out.fills[1].backfill_id.as_str(), "bf_young");
    assert_eq!(out.fills[1].ticket_ids(), vec!["tkt_late"]);
}

#[test]
fn expired_and_disabled_backfills_take_nobody() {
    let config = backfill_on(mmr_mode(&[5, 5], 5.0, 2.0));
    let pool = vec![solo("a", 1500.0, 0.0)];
    let bf = open("a", &[1, 0], Some(1500.0), 0.0);
    assert!(fill_pass(&config, &pool, std::slice::from_ref(&bf), 120.0)
        .fills
        .is_empty());
    let off = mmr_mode(&[5, 5], 5.0, 2.0);
    assert!(fill_pass(&off, &pool, &[bf], 1.0).fills.is_empty());
}

#[test]
fn backfills_come_before_new_matches() {
    let config = backfill_on(mmr_mode(&[1, 1], 5.0, 2.0));
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1500.0, 0.0)];
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let out = run_cycle_with_backfills(
        &config,
        &pool,
        &[open("x", &[1, 0], Some(1500.0), 0.0)],
        1.0,
        &mut rng,
    );
    assert_eq!(out.fills.len(), 1);
    assert!(
        out.cycle.matches.is_empty(),
        "the one left cannot make a match"
    );
    assert_eq!(out.cycle.pool_size, 2);
    assert_eq!(out.cycle.waiting.len(), 1);
}

proptest! {
    /// Whatever the pool and the seats: open seats never go below zero,
    /// every fill's seats add up, a party is never split (keep-together)
    /// and never seated twice, and no ticket goes to two backfills.
    #[test]
    fn seats_never_go_negative_and_parties_stay_whole(
        sizes in proptest::collection::vec(1usize..=3, 1..12),
        mmrs in proptest::collection::vec(1000.0f64..2000.0, 12),
        seats in proptest::collection::vec(proptest::collection::vec(0u32..4, 2), 1..4),
        keep in any::<bool>(),
    ) {
        let config = backfill_on(with_parties(mmr_mode(&[4, 4], 20.0, 2.0), 3, keep));
        let mut pool = Vec::new();
        for (i, size) in sizes.iter().enumerate() {
            pool.extend(party(&format!("p{i}"), *size, mmrs[i], i as f64));
        }
        let bfs: Vec<OpenBackfill> = seats
            .iter()
            .enumerate()
            .map(|(i, s)| open(&i.to_string(), s, Some(1500.0), 0.0))
            .collect();
        let out = fill_pass(&config, &pool, &bfs, 20.0);
        let mut seen = std::collections::HashSet::new();
        for fill in &out.fills {
            let bf = bfs.iter().find(|b| b.backfill_id == fill.backfill_id).unwrap();
            let taken = fill.seats_taken();
            for t in 0..bf.open_seats.len() {
                prop_assert!(taken[t] <= bf.open_seats[t]);
                prop_assert_eq!(bf.open_seats[t] - taken[t], fill.open_seats_left[t]);
            }
            let mut parties: std::collections::HashMap<String, (usize, std::collections::HashSet<usize>)> = Default::default();
            for team in &fill.teams {
                for p in &team.players {
                    prop_assert!(seen.insert(p.ticket_id.clone()), "taken twice");
                    let key = p.party_id.clone().unwrap_or_else(|| p.player_id.clone()).to_string();
                    let e = parties.entry(key).or_default();
                    e.0 += 1;
                    e.1.insert(team.index);
                }
            }
            for (key, (count, teams)) in parties {
                let size = pool
                    .iter()
                    .filter(|s| {
                        s.party.as_ref().filter(|p| p.members.len() > 1).map(|p| p.id.to_string())
                            .unwrap_or_else(|| s.player_id.to_string()) == key
                    })
                    .count();
                prop_assert_eq!(count, size, "party {} split off", key);
                if keep {
                    prop_assert_eq!(teams.len(), 1, "party {} on two teams", key);
                }
            }
        }
    }
}

#[test]
fn ttl_seconds_is_validated_with_its_field() {
    let tier = matchplane_matchmaker::Tier::enterprise();
    let mut config = mmr_mode(&[5, 5], 5.0, 2.0);
    config.backfill = Some(BackfillConfig {
        ttl_seconds: 4,
        ..BackfillConfig::default()
    });
    let errors = matchplane_matchmaker::validate(&config, &tier).unwrap_err();
    assert_eq!(errors.0[0].field, "backfill.ttlSeconds");
    config.backfill = Some(BackfillConfig {
        ttl_seconds: 3600,
        ..BackfillConfig::default()
    });
    assert!(matchplane_matchmaker::validate(&config, &tier).is_ok());
    let parsed: GameModeConfig = serde_json::from_value(serde_json::json!({
        "name": "m", "matchShape": [5, 5], "matchmakingCycleDurationSeconds": 2,
        "algorithm": {"type": "fifo"}, "backfill": {"auto": true}
    }))
    .unwrap();
    assert_eq!(
        parsed.backfill,
        Some(BackfillConfig {
            enabled: true,
            auto: true,
            ttl_seconds: 120
        })
    );
}

/// Backfill with rules (docs/rules.md#backfill): a newcomer satisfies every
/// rule against the roster and the fill's other newcomers. The request's
/// own values stand for the whole roster; a roster player's known values
/// count otherwise; a player with none fits every rule but `avoid`, which
/// reads the newcomer's set against every roster player's id.
#[test]
fn a_fill_keeps_every_rule_against_the_roster_and_its_other_newcomers() {
    use matchplane_matchmaker::rules::{RosterMember, RosterValues};
    use serde_json::json;
    let config = backfill_on(ruled(&[2, 2]));
    let member = |id: &str, attrs: serde_json::Value| RosterMember {
        player_id: id.into(),
        attributes: serde_json::from_value(attrs).unwrap(),
    };
    let values = |attrs: serde_json::Value| serde_json::from_value(attrs).unwrap();
    let newcomer = |id: &str, build: &str, maps: &[&str], level: f64, blocked: &[&str]| {
        player(
            id,
            1500.0,
            0.0,
            json!({"build": build, "maps": maps, "level": level, "blocked": blocked}),
        )
    };
    let with_roster = |seats: &[u32], roster: RosterValues| OpenBackfill {
        open_roles: Vec::new(),
        roster,
        ..open("a", seats, Some(1500.0), 0.0)
    };
    let seated = |attrs: serde_json::Value| RosterValues {
        attributes: Default::default(),
        players: vec![
            member("r1", attrs.clone()),
            member("r2", attrs),
            member("stranger", json!({})),
        ],
    };
    let base = json!({"build": "1.4", "maps": ["dust", "nuke"], "level": 50, "blocked": []});

    // The roster's build and maps: another build, or no shared map, is refused.
    let pool = vec![
        newcomer("other-build", "1.5", &["dust"], 50.0, &[]),
        newcomer("no-map", "1.4", &["inferno"], 50.0, &[]),
        newcomer("fits", "1.4", &["nuke"], 52.0, &[]),
    ];
    let got = taken_ids(
        &config,
        &pool,
        &[with_roster(&[1, 0], seated(base.clone()))],
        1.0,
    );
    assert_eq!(got, vec![vec!["tkt_fits".to_string()]]);

    // The request's maps stand for the roster: only dust is being played.
    let mut roster = seated(base.clone());
    roster.attributes = values(json!({"maps": ["dust"]}));
    let got = taken_ids(&config, &pool, &[with_roster(&[1, 0], roster)], 1.0);
    assert!(got.is_empty(), "{got:?}");

    // Levels: within 10 of each roster player's, and of each other newcomer's.
    let pool = vec![
        newcomer("far", "1.4", &["dust"], 61.0, &[]),
        newcomer("low", "1.4", &["dust"], 41.0, &[]),
        newcomer("high", "1.4", &["dust"], 59.0, &[]),
    ];
    let got = taken_ids(
        &config,
        &pool,
        &[with_roster(&[2, 0], seated(base.clone()))],
        1.0,
    );
    // low and high are each within 10 of 50, not of each other: one only.
    assert_eq!(got, vec![vec!["tkt_low".to_string()]]);

    // Block lists: a newcomer blocking a roster player (even one with no
    // values known), or blocked by one, is refused.
    let pool = vec![
        newcomer("blocks-stranger", "1.4", &["dust"], 50.0, &["stranger"]),
        newcomer("blocked-by-r1", "1.4", &["dust"], 50.0, &[]),
        newcomer("friend", "1.4", &["dust"], 50.0, &[]),
    ];
    let mut roster = seated(base.clone());
    roster.players[0] = member(
        "r1",
        json!({"build": "1.4", "maps": ["dust"], "level": 50, "blocked": ["blocked-by-r1"]}),
    );
    let got = taken_ids(&config, &pool, &[with_roster(&[1, 0], roster)], 1.0);
    assert_eq!(got, vec![vec!["tkt_friend".to_string()]]);

    // A roster of strangers (nothing known) takes anyone the rules among
    // the newcomers allow, and no one who blocks them.
    let strangers = RosterValues {
        attributes: Default::default(),
        players: vec![member("s1", json!({})), member("s2", json!({}))],
    };
    let pool = vec![
        newcomer("x", "1.5", &["inferno"], 10.0, &["s2"]),
        newcomer("y", "1.5", &["inferno"], 12.0, &[]),
        newcomer("z", "1.4", &["inferno"], 12.0, &[]),
    ];
    let got = taken_ids(&config, &pool, &[with_roster(&[2, 0], strangers)], 1.0);
    assert_eq!(got, vec![vec!["tkt_y".to_string()]]);
}

#[test]
fn a_fill_never_seats_a_player_the_roster_still_lists() {
    use matchplane_matchmaker::rules::{RosterMember, RosterValues};
    // y3 is on the roster (team 1) and searched again before the game
    // server noticed: the open seat goes to the next player, not to y3 a
    // second time. With rules or without, the roster names its players.
    let config = backfill_on(mmr_mode(&[2, 2], 5.0, 2.0));
    let pool = vec![solo("y3", 1500.0, 0.0), solo("y9", 1501.0, 1.0)];
    let roster = RosterValues {
        attributes: Default::default(),
        players: ["y1", "y3", "y4"]
            .iter()
            .map(|id| RosterMember {
                player_id: (*id).to_owned(),
                attributes: Default::default(),
            })
            .collect(),
    };
    let bf = OpenBackfill {
        roster,
        ..open("y", &[1, 0], Some(1500.0), 0.0)
    };
    let got = taken_ids(&config, &pool, std::slice::from_ref(&bf), 5.0);
    assert_eq!(got, vec![vec!["tkt_y9".to_owned()]]);
    // Alone in the pool, y3 is not seated at all.
    let got = taken_ids(&config, &pool[..1], &[bf], 5.0);
    assert!(got.is_empty(), "{got:?}");
}
