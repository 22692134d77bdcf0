//! Preview: the current and a proposed config's cycle over one pool.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::preview::preview;

#[test]
fn a_tighter_tolerance_matches_fewer_and_says_why_the_rest_wait() {
    let current = mmr_mode(&[1, 1], 5.0, 2.0);
    let proposed = mmr_mode(&[1, 1], 1.0, 1.0);
    // Pairs 100 apart: in range at base 5 (150), out at base 1 (30).
    let pool: Vec<_> = (0..10)
        .flat_map(|i| {
            let m = 100.0 + 280.0 * f64::from(i);
            [
                solo(&format!("a{i}"), m, 0.0),
                solo(&format!("b{i}"), m + 100.0, 0.0),
            ]
        })
        .collect();
    let p = preview(&current, &proposed, &pool, 1.0);
    assert_eq!(p.pool_size, 20);
    assert_eq!(p.current.matches, 10);
    assert_eq!(p.current.players_matched, 20);
    assert_eq!(p.current.matched_share, 1.0);
    assert_eq!(p.current.mmr_spread.p50, Some(100.0));
    assert_eq!(p.proposed.matches, 0);
    assert_eq!(p.proposed.waiting, 20);
    let out_of_range = p.waiting_reasons["NO_CANDIDATES_IN_RANGE"];
    assert_eq!((out_of_range.current, out_of_range.proposed), (0, 20));
}

#[test]
fn searches_the_proposed_recheck_would_fail_are_listed_with_their_codes() {
    let current = with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true);
    let mut proposed = mmr_mode(&[2, 2], 5.0, 2.0);
    proposed.parties.allow_parties = false;
    let mut pool = party("d", 2, 1500.0, 0.0);
    pool.push(solo("s1", 1500.0, 0.0));
    pool.push(solo("s2", 1500.0, 0.0));
    let p = preview(&current, &proposed, &pool, 1.0);
    assert_eq!(p.current.matches, 1);
    assert_eq!(p.current.failed.count, 0);
    assert_eq!(p.proposed.failed.count, 2);
    assert_eq!(p.proposed.failed.by_code["PARTIES_NOT_ENABLED"], 2);
    assert_eq!(p.proposed.failed.searches[0].code, "PARTIES_NOT_ENABLED");
    assert_eq!(p.proposed.matches, 0, "two solos left for a 2v2");
    let short = p.waiting_reasons["NOT_ENOUGH_PLAYERS"];
    assert_eq!((short.current, short.proposed), (0, 2));

    // An MMR mode turned FIFO and back: a ticket without MMR fails.
    let fifo = fifo_mode(&[1, 1]);
    let mmr = mmr_mode(&[1, 1], 5.0, 2.0);
    let pool = vec![pinged("x", 20.0, 0.0), solo("y", 1500.0, 0.0)];
    let p = preview(&fifo, &mmr, &pool, 1.0);
    assert_eq!(p.current.matches, 1);
    assert_eq!(p.proposed.failed.by_code["MMR_REQUIRED"], 1);
}

#[test]
fn the_same_pool_and_time_give_the_same_preview() {
    let config = fifo_mode(&[2, 2]);
    let pool: Vec<_> = (0..40)
        .map(|i| solo(&format!("p{i}"), 1000.0 + f64::from(i), f64::from(i) / 10.0))
        .collect();
    let a = serde_json::to_string(&preview(&config, &config, &pool, 9.0)).unwrap();
    let b = serde_json::to_string(&preview(&config, &config, &pool, 9.0)).unwrap();
    assert_eq!(a, b);
    let empty = preview(&config, &config, &[], 9.0);
    assert_eq!(empty.proposed.matched_share, 0.0);
    assert!(empty.waiting_reasons.is_empty());
}
