//! The mode's stats count the players still waiting: a config that
//! strands players does not look good for counting only those it matched.
//! Per rule over attributes, the stats history counts the candidates each
//! rule turned away in real worker cycles, and the stats add them up over
//! the last hour.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, Search};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

on_both_pools!(
    stats_count_the_players_still_waiting,
    stats_history_counts_what_each_rule_turned_away
);

async fn stats_count_the_players_still_waiting(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    // One player matched after 2.5 s; two waiting for 100 s already.
    t.store_match_alone(&p, "duel", "tkt_m", "matched").await;
    let mode = ModeKey::new(&p, "duel");
    let now = unix_now();
    for (ticket, player) in [("tkt_a", "a"), ("tkt_b", "b")] {
        t.play
            .pool
            .add_search(
                &mode,
                &Search::solo(ticket, player, 1500.0, now - 100.0),
                now + 600.0,
                None,
            )
            .await
            .unwrap();
    }
    let path = format!("/v1/projects/{p}/game-modes/duel/stats");
    let a = t.call(Method::GET, &path, Some(&key), None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body["stillWaiting"], 2, "{}", a.body);
    // Matched players only.
    assert_eq!(a.body["waitSeconds"]["p99"], 2.5, "{}", a.body);
    // With the waiting ones, censored at now.
    let all = &a.body["waitSecondsAll"];
    for q in ["p50", "p90", "p99"] {
        let wait = all[q].as_f64().unwrap();
        assert!((100.0..110.0).contains(&wait), "{q}: {}", a.body);
    }
}

/// Per rule, the counts of a `ruleTurnedAway` object.
fn counts(v: &Value) -> BTreeMap<String, u64> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

async fn stats_history_counts_what_each_rule_turned_away(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut mode = duel("ruled");
    mode["attributes"] = json!({
        "build": {"type": "string", "values": ["1.4", "1.5"]},
        "level": {"type": "number", "min": 1, "max": 100}
    });
    mode["rules"] = json!([
        {"name": "same-build", "type": "equal", "attribute": "build"},
        {"name": "level", "type": "distance", "attribute": "level", "max": 5}
    ]);
    t.mode(&p, &key, mode).await;
    // Before any cycle (and so with an empty pool), every rule is listed
    // at 0.
    let zeros = json!({"same-build": 0, "level": 0});
    let pool = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/ruled/pool"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(pool.body["ruleTurnedAway"], zeros, "{}", pool.body);
    let stats = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/ruled/stats"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(stats.body["ruleTurnedAway"], zeros, "{}", stats.body);
    assert_eq!(
        stats.body["ruleTurnedAwayLastHour"], zeros,
        "{}",
        stats.body
    );
    // All at one MMR: only the rules keep them apart. b has another build
    // than a and c; c is 30 levels from a and b.
    for (player, build, level) in [("a", "1.4", 10), ("b", "1.5", 10), ("c", "1.4", 40)] {
        let body = json!({"gameMode": "ruled", "playerId": player,
            "attributes": {"mmr": 1500, "build": build, "level": level}});
        let (_, token) = t.ticket_ok(&p, &key, body).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }

    // Three real cycles of the worker; after each, the pool view says what
    // each rule turned away in it.
    let mode = ModeKey::new(&p, "ruled");
    let config = matchplane_worker::modes::refresh(&t.db, &mode, None)
        .await
        .unwrap()
        .expect("the mode exists");
    let token = t
        .play
        .pool
        .acquire_lease(&mode, "w", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    let ticker = matchplane_worker::tick::Ticker {
        pool: t.play.pool.as_ref(),
        db: &t.db,
        claim_concurrency: 16,
        expire_batch: 100,
        ends: None,
        lapses: None,
        period: None,
        carried: None,
    };
    let pool_path = format!("/v1/projects/{p}/game-modes/ruled/pool");
    let mut cycles: BTreeMap<String, u64> = BTreeMap::new();
    let mut last = BTreeMap::new();
    for _ in 0..3 {
        let (_, report) = ticker
            .tick(&mode, &config, token, chrono::Utc::now())
            .await
            .unwrap();
        assert_eq!((report.candidates, report.matches), (3, 0), "{report:?}");
        let pool = t.call(Method::GET, &pool_path, Some(&key), None).await;
        assert_eq!(pool.status, StatusCode::OK, "{}", pool.body);
        last = counts(&pool.body["ruleTurnedAway"]);
        for (rule, n) in &last {
            *cycles.entry(rule.clone()).or_insert(0) += n;
        }
    }
    // Each cycle counts distinct candidates per rule: all three by build
    // (b in a's and c's tries, a and c in b's), a and c by level (in each
    // other's tries; b already failed on build).
    let expected: BTreeMap<String, u64> =
        [("level".to_owned(), 2), ("same-build".to_owned(), 3)].into();
    assert_eq!(last, expected);

    // The history adds the cycles' counts up by rule, whatever minutes
    // the cycles fell in.
    let history = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/ruled/stats/history"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    let buckets = history.body["buckets"].as_array().unwrap();
    assert!(!buckets.is_empty(), "{}", history.body);
    let mut recorded: BTreeMap<String, u64> = BTreeMap::new();
    for bucket in buckets {
        for (rule, n) in counts(&bucket["ruleTurnedAway"]) {
            *recorded.entry(rule).or_insert(0) += n;
        }
    }
    assert_eq!(recorded, cycles, "{}", history.body);
    assert_eq!(
        buckets
            .iter()
            .map(|b| b["cycles"].as_i64().unwrap())
            .sum::<i64>(),
        3,
        "{}",
        history.body
    );

    // The stats: the last cycle's counts, and the last hour's sums.
    let stats = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/ruled/stats"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.body);
    assert_eq!(
        counts(&stats.body["ruleTurnedAway"]),
        last,
        "{}",
        stats.body
    );
    assert_eq!(
        counts(&stats.body["ruleTurnedAwayLastHour"]),
        cycles,
        "{}",
        stats.body
    );
}
