//! The rules of docs/game-modes.md#how-a-cycle-forms-matches, each with the docs' own examples and the issue's
//! cases from the field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::{Code, Search, TeamAssignment, WaitingReason};

#[test]
fn mmr_1500_and_1800_match_at_exactly_ten_seconds_not_before() {
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1800.0, 0.0)];
    assert!(cycle(&config, &pool, 9.99).matches.is_empty());
    let early = cycle(&config, &pool, 9.0);
    assert!(matches!(
        early.waiting[0].reason,
        WaitingReason::NoCandidatesInRange { range, nearest_distance: Some(d), unblocks_in_seconds: Some(u) }
            if range == 285.0 && d == 300.0 && (u - 1.0).abs() < 1e-9
    ));
    let at_ten = cycle(&config, &pool, 10.0);
    assert_eq!(at_ten.matches.len(), 1);
    assert_eq!(at_ten.matches[0].mmr_spread, 300.0);
}

#[test]
fn fit_is_mutual_a_wide_range_does_not_pull_in_a_newcomer() {
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    // a waited 60 s (range 1050); b just arrived (range 150): 300 apart.
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1800.0, 60.0)];
    assert!(cycle(&config, &pool, 60.0).matches.is_empty());
}

#[test]
fn an_unmatchable_candidate_never_blocks_the_others() {
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    let pool = vec![
        solo("outlier", 100.0, 0.0),
        solo("b", 1500.0, 1.0),
        solo("c", 1510.0, 2.0),
    ];
    let out = cycle(&config, &pool, 3.0);
    let mut matched: Vec<_> = out.matches[0].ticket_ids();
    matched.sort();
    assert_eq!(matched, vec!["tkt_b", "tkt_c"]);
    assert_eq!(out.waiting.len(), 1);
    assert_eq!(out.waiting[0].player_id, "outlier");
    assert_eq!(out.waiting[0].reason.code(), Code::NoCandidatesInRange);
}

#[test]
fn every_joiner_must_fit_every_member() {
    // [1,1,1] with range 150 (no wait): 1000 anchors, 1140 fits it, 860
    // fits it too but not 1140 (280 apart): no group of three.
    let config = mmr_mode(&[1, 1, 1], 5.0, 1.0);
    let pool = vec![
        solo("a", 1000.0, 0.0),
        solo("b", 1140.0, 0.0),
        solo("c", 860.0, 0.0),
    ];
    let out = cycle(&config, &pool, 0.0);
    assert!(out.matches.is_empty());
    for m in &out.matches {
        for t in &m.teams {
            assert!(t.players.len() == 1);
        }
    }
}

#[test]
fn teams_are_never_stacked() {
    let config = mmr_mode(&[2, 2], 100.0, 1.0);
    let pool = vec![
        solo("a", 2000.0, 0.0),
        solo("b", 1900.0, 0.0),
        solo("c", 1100.0, 0.0),
        solo("d", 1000.0, 0.0),
    ];
    let out = cycle(&config, &pool, 0.0);
    assert_eq!(out.matches.len(), 1);
    let sums: Vec<f64> = out.matches[0]
        .teams
        .iter()
        .map(|t| t.players.iter().map(|p| p.mmr.unwrap()).sum())
        .collect();
    assert_eq!(sums, vec![3000.0, 3000.0]);
    assert_eq!(out.matches[0].team_imbalance, 0.0);
}

#[test]
fn snake_deals_uneven_shapes() {
    let mut config = mmr_mode(&[1, 3], 100.0, 1.0);
    config.team_assignment = TeamAssignment::Snake;
    let pool = vec![
        solo("a", 2000.0, 0.0),
        solo("b", 1900.0, 0.0),
        solo("c", 1100.0, 0.0),
        solo("d", 1000.0, 0.0),
    ];
    let out = cycle(&config, &pool, 0.0);
    assert_eq!(
        teams_of(&out),
        vec![vec![
            vec!["a".to_string()],
            vec!["b".into(), "c".into(), "d".into()]
        ]]
    );
}

fn keep_together_5v5() -> matchplane_matchmaker::GameModeConfig {
    with_parties(mmr_mode(&[5, 5], 100.0, 1.0), 3, true)
}

#[test]
fn keep_together_3_3_2_2_match_as_3_2_vs_3_2() {
    let mut pool = Vec::new();
    pool.extend(party("p1", 3, 1500.0, 0.0));
    pool.extend(party("p2", 3, 1500.0, 1.0));
    pool.extend(party("p3", 2, 1500.0, 2.0));
    pool.extend(party("p4", 2, 1500.0, 3.0));
    let out = cycle(&keep_together_5v5(), &pool, 4.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(party_sizes(&out, 0), vec![vec![3, 2], vec![3, 2]]);
}

#[test]
fn keep_together_3_3_3_1_forms_no_match_and_drops_nobody() {
    let mut pool = Vec::new();
    pool.extend(party("p1", 3, 1500.0, 0.0));
    pool.extend(party("p2", 3, 1500.0, 1.0));
    pool.extend(party("p3", 3, 1500.0, 2.0));
    pool.push(solo("s1", 1500.0, 3.0));
    let out = cycle(&keep_together_5v5(), &pool, 4.0);
    assert!(out.matches.is_empty());
    assert!(out.failed.is_empty());
    assert_eq!(out.waiting.len(), 10, "nobody dropped");

    pool.push(solo("s2", 1500.0, 3.5));
    let out = cycle(&keep_together_5v5(), &pool, 4.0);
    assert!(out.matches.is_empty(), "3,3,3,1,1 still none");
    assert_eq!(out.waiting.len(), 11);
    assert!(out
        .waiting
        .iter()
        .any(|w| w.reason.code() == Code::NoExactSeating));
}

#[test]
fn keep_together_3_3_3_2_1_1_matches_and_one_trio_waits() {
    let mut pool = Vec::new();
    pool.extend(party("p1", 3, 1500.0, 0.0));
    pool.extend(party("p2", 3, 1500.0, 1.0));
    pool.extend(party("p3", 3, 1500.0, 2.0));
    pool.extend(party("p4", 2, 1500.0, 3.0));
    pool.push(solo("s1", 1500.0, 4.0));
    pool.push(solo("s2", 1500.0, 5.0));
    let out = cycle(&keep_together_5v5(), &pool, 6.0);
    assert_eq!(out.matches.len(), 1);
    let mut sizes = party_sizes(&out, 0);
    sizes.sort();
    assert_eq!(sizes, vec![vec![3, 1, 1], vec![3, 2]]);
    assert_eq!(out.waiting.len(), 3, "one trio waits");
}

#[test]
fn three_duos_never_fill_a_3v3_two_duos_and_two_solos_do() {
    let config = with_parties(mmr_mode(&[3, 3], 100.0, 1.0), 2, true);
    let mut pool = Vec::new();
    pool.extend(party("d1", 2, 1500.0, 0.0));
    pool.extend(party("d2", 2, 1500.0, 0.0));
    pool.extend(party("d3", 2, 1500.0, 0.0));
    let out = cycle(&config, &pool, 1.0);
    assert!(out.matches.is_empty());
    assert!(out
        .waiting
        .iter()
        .all(|w| w.reason.code() == Code::NoExactSeating));
    // The unblock hint: two solos (one per team) would seat two of the duos.
    let hint = serde_json::to_value(&out.waiting[0].reason).unwrap();
    assert_eq!(hint["completingPartySizes"], serde_json::json!([1, 1]));

    let mut pool = Vec::new();
    pool.extend(party("d1", 2, 1500.0, 0.0));
    pool.extend(party("d2", 2, 1500.0, 0.0));
    pool.push(solo("s1", 1500.0, 0.0));
    pool.push(solo("s2", 1500.0, 0.0));
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(party_sizes(&out, 0), vec![vec![2, 1], vec![2, 1]]);
}

#[test]
fn in_1v3_a_duo_can_only_sit_on_the_team_of_three() {
    let config = with_parties(mmr_mode(&[1, 3], 100.0, 1.0), 2, true);
    for order in 0..2 {
        let mut pool = Vec::new();
        let duo = party("duo", 2, 2500.0, if order == 0 { 0.0 } else { 2.0 });
        pool.extend(duo);
        pool.push(solo("s1", 1000.0, 1.0));
        pool.push(solo("s2", 1000.0, 1.5));
        let out = cycle(&config, &pool, 3.0);
        assert_eq!(out.matches.len(), 1);
        let team0 = &out.matches[0].teams[0];
        assert_eq!(team0.players.len(), 1);
        assert!(team0.players[0].party_id.is_none());
    }
}

#[test]
fn keep_together_off_deals_party_members_individually() {
    let config = with_parties(mmr_mode(&[2, 2], 100.0, 1.0), 2, false);
    let mut pool = Vec::new();
    pool.extend(party("strong", 2, 2000.0, 0.0));
    pool.push(solo("w1", 1000.0, 0.0));
    pool.push(solo("w2", 1000.0, 0.0));
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(
        out.matches[0].team_imbalance, 0.0,
        "the duo is split to balance"
    );
}

#[test]
fn ping_group_must_fit_as_a_whole_not_pair_by_pair() {
    let config = ping_mode(&[1, 1, 1], 50.0);
    let pool = vec![
        pinged("p20", 20.0, 0.0),
        pinged("p60", 60.0, 1.0),
        pinged("p100", 100.0, 2.0),
    ];
    let out = cycle(&config, &pool, 3.0);
    assert!(
        out.matches.is_empty(),
        "20-60 and 60-100 fit, 20-100 does not"
    );

    // The case: adding 70 matches 60, 70, 100 and 20 waits. It holds
    // with 60 waiting longest; see the next test for 20 waiting longest.
    let pool = vec![
        pinged("p60", 60.0, 0.0),
        pinged("p100", 100.0, 1.0),
        pinged("p20", 20.0, 2.0),
        pinged("p70", 70.0, 3.0),
    ];
    let out = cycle(&config, &pool, 4.0);
    assert_eq!(out.matches.len(), 1);
    let mut ids: Vec<_> = out.matches[0]
        .ticket_ids()
        .into_iter()
        .map(String::from)
        .collect();
    ids.sort();
    assert_eq!(ids, vec!["tkt_p100", "tkt_p60", "tkt_p70"]);
    assert_eq!(out.waiting.len(), 1);
    assert_eq!(out.waiting[0].player_id, "p20");
}

#[test]
fn ping_spread_of_exactly_max_delta_is_accepted_and_one_more_is_not() {
    let config = ping_mode(&[1, 1, 1], 50.0);
    // 20 anchors (longest wait): 20, 60, 70 spread exactly 50.
    let pool = vec![
        pinged("a", 20.0, 0.0),
        pinged("b", 60.0, 1.0),
        pinged("c", 70.0, 2.0),
    ];
    assert_eq!(cycle(&config, &pool, 3.0).matches.len(), 1);
    let pool = vec![
        pinged("a", 20.0, 0.0),
        pinged("b", 60.0, 1.0),
        pinged("c", 71.0, 2.0),
    ];
    assert!(cycle(&config, &pool, 3.0).matches.is_empty());
}

#[test]
fn ping_never_widens_with_wait() {
    let config = ping_mode(&[1, 1], 50.0);
    let pool = vec![pinged("a", 20.0, 0.0), pinged("b", 71.0, 0.0)];
    assert!(cycle(&config, &pool, 100_000.0).matches.is_empty());
}

#[test]
fn ping_not_measured_is_not_a_candidate() {
    let config = ping_mode(&[1, 1], 50.0);
    let mut unmeasured = pinged("b", 30.0, 0.0);
    unmeasured.ping_ms = None;
    let pool = vec![pinged("a", 20.0, 0.0), unmeasured];
    let out = cycle(&config, &pool, 1.0);
    assert!(out.matches.is_empty());
    let b = out.waiting.iter().find(|w| w.player_id == "b").unwrap();
    assert_eq!(b.reason, WaitingReason::PingNotMeasured);
    let a = out.waiting.iter().find(|w| w.player_id == "a").unwrap();
    assert_eq!(a.reason.code(), Code::NotEnoughPlayers);
}

#[test]
fn party_ping_is_the_slowest_member() {
    let config = with_parties(ping_mode(&[2, 2], 50.0), 2, true);
    let mut duo = party("d", 2, 0.0, 0.0);
    duo[0].ping_ms = Some(10.0);
    duo[1].ping_ms = Some(90.0);
    let mut pool = duo;
    pool.push(pinged("x", 10.0, 0.0));
    pool.push(pinged("y", 10.0, 0.0));
    assert!(
        cycle(&config, &pool, 1.0).matches.is_empty(),
        "the duo plays at 90 ms"
    );
    pool[2].ping_ms = Some(80.0);
    pool[3].ping_ms = Some(60.0);
    assert_eq!(cycle(&config, &pool, 1.0).matches.len(), 1);
}

#[test]
fn incomplete_party_is_not_matched_short_handed() {
    let config = with_parties(mmr_mode(&[2, 2], 100.0, 1.0), 2, true);
    let mut duo = party("d", 2, 1500.0, 0.0);
    duo.pop();
    let mut pool = duo;
    pool.extend([
        solo("a", 1500.0, 0.0),
        solo("b", 1500.0, 0.0),
        solo("c", 1500.0, 0.0),
    ]);
    let out = cycle(&config, &pool, 1.0);
    assert!(out.matches.is_empty());
    let d0 = out.waiting.iter().find(|w| w.player_id == "d-0").unwrap();
    assert_eq!(
        d0.reason,
        WaitingReason::PartyIncomplete {
            missing: vec!["d-1".into()]
        }
    );
}

#[test]
fn party_values_are_mean_mmr_and_earliest_wait() {
    // Duo members 1000 and 2000: mean 1500, matched with a pair near 1500.
    let config = with_parties(mmr_mode(&[2, 2], 5.0, 1.0), 2, false);
    let mut duo = party("d", 2, 0.0, 0.0);
    duo[0].mmr = Some(1000.0);
    duo[1].mmr = Some(2000.0);
    duo[1].queued_at = 5.0;
    let mut pool = duo;
    pool.extend([solo("a", 1490.0, 0.0), solo("b", 1510.0, 0.0)]);
    let out = cycle(&config, &pool, 6.0);
    assert_eq!(out.matches.len(), 1);
    let waits: Vec<f64> = out.matches[0]
        .teams
        .iter()
        .flat_map(|t| t.players.iter().map(|p| p.wait_seconds))
        .collect();
    assert!(waits.contains(&1.0) && waits.contains(&6.0));
}

#[test]
fn fifo_takes_wait_order_first_fit_by_seats() {
    let config = with_parties(fifo_mode(&[2, 2]), 2, true);
    let mut pool = vec![solo("a", 0.0, 0.0)];
    pool.extend(party("d", 2, 0.0, 1.0));
    pool.push(solo("b", 0.0, 2.0));
    pool.push(solo("late", 0.0, 3.0));
    let out = cycle(&config, &pool, 4.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(out.waiting.len(), 1);
    assert_eq!(out.waiting[0].player_id, "late");
}

#[test]
fn fifo_shuffle_comes_from_the_callers_rng() {
    use rand::SeedableRng;
    let config = fifo_mode(&[4, 4]);
    let pool: Vec<Search> = (0..8)
        .map(|i| solo(&format!("p{i}"), 0.0, f64::from(i)))
        .collect();
    let run = |seed| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        matchplane_matchmaker::run_cycle(&config, &pool, 10.0, &mut rng)
    };
    assert_eq!(run(1), run(1), "same seed, same teams");
    assert!(
        (2..20).any(|s| run(s) != run(1)),
        "the seed changes the shuffle"
    );
}

#[test]
fn degenerate_pools_end_cleanly() {
    let config = mmr_mode(&[5, 5], 5.0, 2.0);
    let out = cycle(&config, &[], 0.0);
    assert!(out.matches.is_empty() && out.waiting.is_empty() && out.failed.is_empty());
    let out = cycle(&config, &[solo("a", 1500.0, 0.0)], 0.0);
    assert_eq!(
        out.waiting[0].reason,
        WaitingReason::NotEnoughPlayers {
            seats_waiting: 1,
            seats_needed: 10
        }
    );
    // A [3,3] keep-together mode where only trios wait: shape fillable by
    // seats, but... two trios do fill it. Only duos: never.
    let config = with_parties(mmr_mode(&[3, 3], 100.0, 1.0), 2, true);
    let mut pool = Vec::new();
    for i in 0..7 {
        pool.extend(party(&format!("d{i}"), 2, 1500.0, f64::from(i)));
    }
    let out = cycle(&config, &pool, 10.0);
    assert!(out.matches.is_empty());
    assert_eq!(out.waiting.len(), 14);
}

#[test]
fn config_change_fails_what_it_rules_out() {
    // Parties no longer allowed: the duo fails whole with PARTIES_NOT_ENABLED.
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    let mut pool = party("d", 2, 1500.0, 0.0);
    pool.push(solo("a", 1500.0, 0.0));
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.failed.len(), 2);
    assert!(out.failed.iter().all(|f| f.code == Code::PartiesNotEnabled));

    // A party larger than the new maxSize: PARTY_TOO_LARGE for every member.
    let config = with_parties(mmr_mode(&[3, 3], 5.0, 2.0), 2, true);
    let pool = party("t", 3, 1500.0, 0.0);
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.failed.len(), 3);
    assert!(out.failed.iter().all(|f| f.code == Code::PartyTooLarge));

    // A mode that became MMR: a ticket without mmr fails MMR_REQUIRED.
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    let pool = vec![pinged("p", 20.0, 0.0), solo("a", 1500.0, 0.0)];
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.failed.len(), 1);
    assert_eq!(out.failed[0].code, Code::MmrRequired);

    // A disabled mode fails everyone with GAME_MODE_DISABLED.
    let mut config = mmr_mode(&[1, 1], 5.0, 2.0);
    config.enabled = false;
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1500.0, 0.0)];
    let out = cycle(&config, &pool, 1.0);
    assert!(out.matches.is_empty());
    assert_eq!(out.failed.len(), 2);
    assert!(out.failed.iter().all(|f| f.code == Code::GameModeDisabled));
}

#[test]
fn a_player_searching_twice_is_never_seated_twice() {
    let config = mmr_mode(&[1, 1], 100.0, 1.0);
    let mut dup = solo("a", 1500.0, 1.0);
    dup.ticket_id = "tkt_a2".into();
    let pool = vec![solo("a", 1500.0, 0.0), dup];
    let out = cycle(&config, &pool, 2.0);
    assert!(out.matches.is_empty());
    assert_eq!(out.failed[0].code, Code::PlayerAlreadySearching);
}
