//! Unblock hints on waiting reasons: what would match a waiting search.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::{Algorithm, WaitingReason};
use serde_json::json;

fn reason_json(out: &matchplane_matchmaker::CycleOutcome, player: &str) -> serde_json::Value {
    let w = out.waiting.iter().find(|w| w.player_id == player).unwrap();
    serde_json::to_value(w.status()).unwrap()
}

#[test]
fn out_of_range_says_when_the_nearest_comes_into_range() {
    // 0..3000, base 5, x2: 150 at 0 s, +15 per second. a waited 4 s
    // (210), b 0 s (150); 300 apart: a reaches 300 at 10 s (6 s more),
    // b at 10 s of its own wait (10 s more): the later one decides.
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1800.0, 4.0)];
    let out = cycle(&config, &pool, 4.0);
    let a = reason_json(&out, "a");
    assert_eq!(a["code"], "NO_CANDIDATES_IN_RANGE");
    assert_eq!(a["nearestDistance"], json!(300.0));
    assert_eq!(a["unblocksInSeconds"], json!(10.0));
    // And it is right: they match 10 s later, not before.
    assert!(cycle(&config, &pool, 13.9).matches.is_empty());
    assert_eq!(cycle(&config, &pool, 14.0).matches.len(), 1);
}

#[test]
fn never_is_null_for_a_capped_range_and_a_flat_ping_range() {
    let mut config = mmr_mode(&[1, 1], 5.0, 2.0);
    if let Algorithm::Mmr { max_tolerance, .. } = &mut config.algorithm {
        *max_tolerance = Some(8.0); // 240 at most
    }
    let pool = vec![solo("a", 1500.0, 0.0), solo("b", 1800.0, 0.0)];
    let a = reason_json(&cycle(&config, &pool, 1.0), "a");
    assert_eq!(a["code"], "NO_CANDIDATES_IN_RANGE");
    assert!(a.get("unblocksInSeconds").unwrap().is_null(), "{a}");

    let ping = ping_mode(&[1, 1], 30.0);
    let pool = vec![pinged("a", 20.0, 0.0), pinged("b", 90.0, 0.0)];
    let a = reason_json(&cycle(&ping, &pool, 100.0), "a");
    assert_eq!(a["nearestDistance"], json!(70.0));
    assert!(a["unblocksInSeconds"].is_null(), "{a}");
}

#[test]
fn a_short_team_waits_for_the_nearest_out_of_range_not_a_partner() {
    // [1,1,1]: a and b fit each other now, a third is missing, and c is
    // far. Their hint is about c, not each other: with a multiplier of 1
    // nobody ever reaches c (null); with 2, when a and c meet.
    let pool = vec![
        solo("a", 1000.0, 0.0),
        solo("b", 1100.0, 0.0),
        solo("c", 2500.0, 0.0),
    ];
    let flat = mmr_mode(&[1, 1, 1], 5.0, 1.0);
    let a = reason_json(&cycle(&flat, &pool, 0.0), "a");
    assert_eq!(a["code"], "NO_CANDIDATES_IN_RANGE");
    assert_eq!(a["nearestDistance"], json!(1500.0), "{a}");
    assert!(a["unblocksInSeconds"].is_null(), "{a}");
    let c = reason_json(&cycle(&flat, &pool, 0.0), "c");
    assert!(c["unblocksInSeconds"].is_null(), "{c}");

    // 150 at 0 s, +15 per second: b is 1400 from c (reached at 83.3 s),
    // a 1500 (90 s); b's own hint is c at 1400.
    let widening = mmr_mode(&[1, 1, 1], 5.0, 2.0);
    let b = reason_json(&cycle(&widening, &pool, 0.0), "b");
    assert_eq!(b["nearestDistance"], json!(1400.0), "{b}");
    let seconds = b["unblocksInSeconds"].as_f64().unwrap();
    assert!(seconds > 80.0 && seconds < 90.0, "{b}");
    assert!(cycle(&widening, &pool, seconds - 1.0).matches.is_empty());

    // Nobody out of range, still short: nothing to wait for but arrivals.
    let two = vec![solo("a", 1000.0, 0.0), solo("b", 1100.0, 0.0)];
    let a = reason_json(&cycle(&flat, &two, 0.0), "a");
    assert!(a["nearestDistance"].is_null(), "{a}");
    assert!(a["unblocksInSeconds"].is_null(), "{a}");
}

#[test]
fn two_trios_in_a_4v4_need_two_solos_and_fifo_says_so_too() {
    for config in [
        with_parties(mmr_mode(&[4, 4], 100.0, 1.0), 3, true),
        with_parties(fifo_mode(&[4, 4]), 3, true),
    ] {
        // 3 + 3 + 2 seats are 8, but a duo cannot sit beside either trio.
        let mut pool = Vec::new();
        pool.extend(party("t1", 3, 1500.0, 0.0));
        pool.extend(party("t2", 3, 1500.0, 0.0));
        pool.extend(party("d", 2, 1500.0, 0.0));
        let out = cycle(&config, &pool, 1.0);
        assert!(out.matches.is_empty());
        let t = reason_json(&out, "t1-0");
        assert_eq!(t["code"], "NO_EXACT_SEATING", "{t}");
        assert_eq!(t["completingPartySizes"], json!([1, 1]), "{t}");
        // Two solos are what it said: they complete the match.
        pool.push(solo("s1", 1500.0, 0.5));
        pool.push(solo("s2", 1500.0, 0.5));
        assert_eq!(cycle(&config, &pool, 1.0).matches.len(), 1);
    }
}

#[test]
fn an_old_stored_reason_without_hints_still_reads() {
    let r: WaitingReason = serde_json::from_value(json!({"code": "NO_EXACT_SEATING"})).unwrap();
    assert_eq!(r.code(), matchplane_matchmaker::Code::NoExactSeating);
    let r: WaitingReason = serde_json::from_value(
        json!({"code": "NO_CANDIDATES_IN_RANGE", "nearestDistance": 3.0, "range": 1.0}),
    )
    .unwrap();
    assert!(matches!(
        r,
        WaitingReason::NoCandidatesInRange {
            unblocks_in_seconds: None,
            ..
        }
    ));
}
