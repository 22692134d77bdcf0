//! The thin-pool rules of the cycle: relaxed shapes, bots, `maxTolerance`,
//! flexible teams, and `found`/`needed`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::{
    Algorithm, Bots, CycleOutcome, FlexibleShape, GameModeConfig, Relaxation, Search, TeamSize,
};

fn relaxed_5v5() -> GameModeConfig {
    let mut c = mmr_mode(&[5, 5], 5.0, 2.0);
    c.relaxations = vec![
        Relaxation {
            after_seconds: 20.0,
            match_shape: vec![4, 4],
        },
        Relaxation {
            after_seconds: 40.0,
            match_shape: vec![3, 3],
        },
    ];
    c
}

fn with_bots(mut c: GameModeConfig, replaceable: bool) -> GameModeConfig {
    c.bots = Some(Bots {
        fill_after_seconds: 60.0,
        min_humans: 2,
        replaceable,
    });
    c
}

fn solos(n: usize, mmr: f64, queued_at: f64) -> Vec<Search> {
    (0..n)
        .map(|i| solo(&format!("p{i}"), mmr + i as f64, queued_at))
        .collect()
}

fn status(outcome: &CycleOutcome, player: &str) -> (u32, u32) {
    let w = outcome
        .waiting
        .iter()
        .find(|w| w.player_id == player)
        .unwrap();
    (w.found, w.needed)
}

#[test]
fn a_relaxed_shape_waits_for_its_time() {
    let config = relaxed_5v5();
    let pool = solos(8, 1500.0, 0.0);
    let early = cycle(&config, &pool, 19.9);
    assert!(early.matches.is_empty());
    assert_eq!(
        status(&early, "p0"),
        (8, 10),
        "8 in range, a full match needs 10"
    );
    let on_time = cycle(&config, &pool, 20.0);
    assert_eq!(on_time.matches.len(), 1);
    let m = &on_time.matches[0];
    assert_eq!(m.match_shape, vec![4, 4]);
    assert_eq!(m.seats_open, vec![1, 1]);
    assert_eq!(
        m.teams.iter().map(|t| t.players.len()).collect::<Vec<_>>(),
        vec![4, 4]
    );
}

#[test]
fn a_full_match_is_preferred_to_a_relaxed_one() {
    let config = relaxed_5v5();
    let pool = solos(10, 1500.0, 0.0);
    let out = cycle(&config, &pool, 100.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(out.matches[0].match_shape, vec![5, 5]);
    assert_eq!(out.matches[0].seats_open, vec![0, 0]);
}

#[test]
fn relaxed_shapes_are_tried_largest_first() {
    let config = relaxed_5v5();
    let out = cycle(&config, &solos(9, 1500.0, 0.0), 50.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(out.matches[0].match_shape, vec![4, 4]);
    // The one left: its full-size try found all 9; [3, 3] is the smallest
    // shape its wait allows.
    assert_eq!(status(&out, "p8"), (9, 6));
}

#[test]
fn keep_together_is_exact_on_the_relaxed_shape() {
    let config = with_parties(relaxed_5v5(), 3, true);
    // Two trios cannot fill [4, 4]; a trio, a solo and a duo pair can.
    let mut pool = party("a", 3, 1500.0, 0.0);
    pool.extend(party("b", 3, 1500.0, 0.0));
    let out = cycle(&config, &pool, 30.0);
    assert!(out.matches.is_empty(), "{:?}", out.matches);
    let out = cycle(&config, &pool, 40.0);
    assert_eq!(out.matches.len(), 1, "two trios make a [3, 3]");
    assert_eq!(party_sizes(&out, 0), vec![vec![3], vec![3]]);
}

#[test]
fn bots_complete_the_base_shape_after_their_time() {
    let config = with_bots(relaxed_5v5(), true);
    let pool = vec![
        solo("a", 1500.0, 0.0),
        solo("b", 1540.0, 0.0),
        solo("c", 1520.0, 0.0),
    ];
    assert!(cycle(&config, &pool, 59.0).matches.is_empty());
    let out = cycle(&config, &pool, 60.0);
    assert_eq!(out.matches.len(), 1);
    let m = &out.matches[0];
    assert_eq!(m.match_shape, vec![5, 5]);
    let humans: Vec<usize> = m.teams.iter().map(|t| t.players.len()).collect();
    let bots: Vec<u32> = m.teams.iter().map(|t| t.bots).collect();
    assert_eq!(humans.iter().sum::<usize>(), 3);
    assert!(humans.iter().all(|h| *h >= 1), "humans spread: {humans:?}");
    assert_eq!(bots.iter().sum::<u32>(), 7);
    for (h, b) in humans.iter().zip(&bots) {
        assert_eq!(*h as u32 + b, 5);
    }
    assert_eq!(m.seats_open, bots, "replaceable bots are open seats");
    assert_eq!(m.bot_mmr, Some(1520.0));
    assert_eq!(m.mmr_spread, 40.0, "over humans only");
}

#[test]
fn bots_that_are_not_replaceable_leave_no_open_seat() {
    let config = with_bots(relaxed_5v5(), false);
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1500.0, 0.0)];
    let out = cycle(&config, &pool, 61.0);
    assert_eq!(out.matches[0].seats_open, vec![0, 0]);
}

#[test]
fn bots_need_min_humans_in_range_of_each_other() {
    let config = with_bots(relaxed_5v5(), true);
    let one = vec![solo("a", 1500.0, 0.0)];
    let out = cycle(&config, &one, 100.0);
    assert!(out.matches.is_empty());
    assert_eq!(status(&out, "a"), (1, 2));
    // Two players far apart even at 100 s (capped window).
    let mut capped = config.clone();
    if let Algorithm::Mmr { max_tolerance, .. } = &mut capped.algorithm {
        *max_tolerance = Some(10.0);
    }
    let far = vec![solo("a", 1000.0, 0.0), solo("b", 2000.0, 0.0)];
    assert!(cycle(&capped, &far, 100.0).matches.is_empty());
}

#[test]
fn bots_never_split_a_party() {
    let config = with_bots(with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true), true);
    // A duo and a solo: duo on one team, the solo and a bot on the other.
    let mut pool = party("d", 2, 1500.0, 0.0);
    pool.push(solo("s", 1500.0, 0.0));
    let out = cycle(&config, &pool, 60.0);
    assert_eq!(out.matches.len(), 1);
    let sizes = party_sizes(&out, 0);
    assert!(sizes.contains(&vec![2]), "{sizes:?}");
    assert_eq!(out.matches[0].teams.iter().map(|t| t.bots).sum::<u32>(), 1);
}

#[test]
fn max_tolerance_stops_the_window() {
    let mut config = mmr_mode(&[1, 1], 5.0, 2.0);
    let pool = vec![solo("a", 1000.0, 0.0), solo("b", 1400.0, 0.0)];
    assert_eq!(cycle(&config, &pool, 600.0).matches.len(), 1);
    if let Algorithm::Mmr { max_tolerance, .. } = &mut config.algorithm {
        *max_tolerance = Some(10.0); // 300 MMR points
    }
    assert!(cycle(&config, &pool, 600.0).matches.is_empty());
}

fn flex_mode(teams: u32, min: u32, max: u32, min_teams: Option<u32>) -> GameModeConfig {
    let mut c = with_parties(mmr_mode(&[1, 1], 5.0, 2.0), max, true);
    c.match_shape = matchplane_matchmaker::MatchShape::Flexible(FlexibleShape {
        teams,
        team_size: TeamSize { min, max },
        min_teams,
        settle_after_seconds: None,
    });
    c
}

#[test]
fn a_full_flexible_match_fills_every_team_to_max() {
    let config = flex_mode(4, 1, 3, None);
    let mut pool = party("t", 3, 1500.0, 0.0);
    pool.extend(party("d", 2, 1500.0, 0.0));
    pool.extend(party("e", 2, 1500.0, 0.0));
    pool.extend(solos(5, 1500.0, 0.0));
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1);
    assert_eq!(out.matches[0].match_shape, vec![3, 3, 3, 3]);
    let sizes = party_sizes(&out, 0);
    assert!(sizes.contains(&vec![3]));
    assert_eq!(
        sizes.iter().filter(|s| s.contains(&2)).count(),
        2,
        "{sizes:?}"
    );
}

#[test]
fn a_free_for_all_settles_with_min_teams_after_its_time() {
    let config = flex_mode(8, 1, 1, Some(4));
    let pool = solos(5, 1500.0, 0.0);
    let early = cycle(&config, &pool, 14.0);
    assert!(early.matches.is_empty());
    assert_eq!(status(&early, "p0"), (5, 8));
    let out = cycle(&config, &pool, 15.0);
    assert_eq!(out.matches.len(), 1);
    let m = &out.matches[0];
    assert_eq!(m.match_shape, vec![1, 1, 1, 1, 1]);
    assert_eq!(m.seats_open, vec![0; 5]);
    // Three players are too few even settled.
    let out = cycle(&config, &solos(3, 1500.0, 0.0), 100.0);
    assert!(out.matches.is_empty());
    assert_eq!(status(&out, "p0"), (3, 4));
}

#[test]
fn a_settled_royale_fills_teams_before_opening_new_ones() {
    let config = flex_mode(20, 1, 3, Some(2));
    let mut pool = party("t", 3, 1500.0, 0.0);
    pool.extend(solos(4, 1500.0, 0.0));
    let out = cycle(&config, &pool, 15.0);
    assert_eq!(out.matches.len(), 1);
    let m = &out.matches[0];
    assert_eq!(m.match_shape, vec![3, 3, 1]);
    assert_eq!(m.seats_open, vec![0, 0, 2]);
}

/// Parties that hold the seats of a settled match but cannot be split into
/// its teams wait with `NO_EXACT_SEATING`, not with a `NOT_ENOUGH_PLAYERS`
/// that `found` reaching `needed` contradicts.
#[test]
fn parties_too_few_for_min_teams_wait_for_seating_not_players() {
    let config = flex_mode(4, 1, 3, Some(4));
    let mut pool = party("a", 3, 1500.0, 0.0);
    pool.extend(party("b", 3, 1500.0, 0.0));
    pool.extend(party("c", 3, 1500.0, 0.0));
    let out = cycle(&config, &pool, 60.0);
    assert!(out.matches.is_empty());
    assert_eq!(out.waiting.len(), 9);
    for w in &out.waiting {
        assert_eq!((w.found, w.needed), (9, 4), "{w:?}");
        assert_eq!(
            w.reason,
            // One more solo opens the fourth team.
            matchplane_matchmaker::WaitingReason::NoExactSeating {
                completing_party_sizes: vec![1]
            },
            "{w:?}"
        );
    }
    // Before the shape settles, too few players is the reason.
    let early = cycle(&config, &pool, 1.0);
    let code = serde_json::to_value(&early.waiting[0].reason).unwrap();
    assert_eq!(code["code"], "NOT_ENOUGH_PLAYERS");
}

#[test]
fn needed_follows_the_wait() {
    let config = with_bots(relaxed_5v5(), true);
    let pool = vec![solo("a", 1500.0, 0.0)];
    for (now, needed) in [(0.0, 10), (20.0, 8), (45.0, 6), (60.0, 2)] {
        let out = cycle(&config, &pool, now);
        assert_eq!(status(&out, "a"), (1, needed), "at {now}");
    }
}

#[test]
fn the_waiting_status_carries_found_and_needed_beside_the_code() {
    let out = cycle(&relaxed_5v5(), &solos(3, 1500.0, 0.0), 1.0);
    let json = serde_json::to_value(out.waiting[0].status()).unwrap();
    assert_eq!(json["code"], "NOT_ENOUGH_PLAYERS");
    assert_eq!(json["found"], 3);
    assert_eq!(json["needed"], 10);
}

/// A relaxed shape none of whose teams holds a party whole (with
/// keep-together) is no match for that party: its wait reads the base
/// shape's `NOT_ENOUGH_PLAYERS` and `needed`, never a seating it could
/// not have. Before, a lone duo under a `[1, 1]` step was "formed" into
/// `[1, 1]` every cycle, failed its seating and read `NO_EXACT_SEATING`
/// with nothing to complete it and `needed` 2.
#[test]
fn a_relaxed_shape_too_small_for_a_party_is_not_its_match() {
    let mut config = with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true);
    config.relaxations = vec![Relaxation {
        after_seconds: 10.0,
        match_shape: vec![1, 1],
    }];
    let duo = party("x", 2, 1500.0, 0.0);
    for now in [1.0, 11.0, 60.0] {
        let out = cycle(&config, &duo, now);
        assert!(out.matches.is_empty());
        for w in &out.waiting {
            let json = serde_json::to_value(w.status()).unwrap();
            assert_eq!(json["code"], "NOT_ENOUGH_PLAYERS", "at {now}: {json}");
            assert_eq!((w.found, w.needed), (2, 4), "at {now}");
        }
    }
    // Two solos still take the relaxed shape, and a solo's `needed` is 2.
    let solos = solos(2, 1500.0, 0.0);
    assert_eq!(cycle(&config, &solos[..1], 11.0).waiting[0].needed, 2);
    assert_eq!(cycle(&config, &solos, 11.0).matches.len(), 1);
    // A duo and two solos make the base shape.
    let mut pool = duo.clone();
    pool.extend(solos);
    assert_eq!(cycle(&config, &pool, 11.0).matches.len(), 1);
}
