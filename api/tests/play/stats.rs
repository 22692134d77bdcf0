//! The mode's stats count the players still waiting: a config that
//! strands players does not look good for counting only those it matched.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, Search};

on_both_pools!(stats_count_the_players_still_waiting);

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
