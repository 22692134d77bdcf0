//! Held matching with the worker (docs/game-modes.md, "Holding matching"): a
//! `backend` key holds a mode (the game's servers are full); its players
//! keep waiting with `MATCHING_HELD` and are not matched however long they
//! wait, the mode view and its stats show who held it and since when, the
//! version does not move; once released they match at the next cycle.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;

on_both_pools!(a_held_mode_keeps_its_players_waiting_until_released);

async fn a_held_mode_keeps_its_players_waiting_until_released(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(
        &p,
        &key,
        json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 0.2, "algorithm": {"type": "fifo"}}),
    )
    .await;
    let hold_path = format!("/v1/projects/{p}/game-modes/duel/hold");
    let mode_path = format!("/v1/projects/{p}/game-modes/duel");

    // The harness's key is named `backend`; a backend holds the mode.
    let held = t.call(Method::POST, &hold_path, Some(&key), None).await;
    assert_eq!(held.status, StatusCode::OK, "{}", held.body);
    assert_eq!(held.body["by"], "backend", "{}", held.body);
    let since = held.body["since"].as_str().unwrap().to_owned();
    // Idempotent: the first `since` stays.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let again = t.call(Method::POST, &hold_path, Some(&key), None).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["since"], since.as_str());
    let mode = t.call(Method::GET, &mode_path, Some(&key), None).await;
    assert_eq!(mode.body["hold"], json!({"since": since, "by": "backend"}));
    assert_eq!(mode.body["version"], 1, "a hold is no config change");

    let worker = t.start_worker(crate::harness::quick_worker());
    let mut searches = Vec::new();
    for player in ["ana", "bo"] {
        let (ticket, token) = t
            .ticket_ok(&p, &key, json!({"gameMode": "duel", "playerId": player}))
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        searches.push((ticket, token));
    }
    let is_held = |v: &Value| v["waitingReason"]["code"] == "MATCHING_HELD";
    t.poll_until(&searches, is_held).await;
    // Many cycles later: still waiting, still held, nobody failed.
    let mut last_wait = 0.0;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        for (ticket, token) in &searches {
            let v = t.search_view(ticket, token).await;
            assert_eq!(v["status"], "searching", "{v}");
            assert!(is_held(&v), "{v}");
        }
    }
    let stats = t
        .call(Method::GET, &format!("{mode_path}/stats"), Some(&key), None)
        .await;
    assert_eq!(stats.status, StatusCode::OK, "{}", stats.body);
    assert_eq!(stats.body["hold"]["by"], "backend", "{}", stats.body);
    assert_eq!(stats.body["matchesLastMinute"], 0, "{}", stats.body);
    let period = stats.body["cyclePeriodSeconds"].as_f64().unwrap();
    assert!((0.2..1.0).contains(&period), "{}", stats.body);
    for (ticket, token) in &searches {
        let v = t.search_view(ticket, token).await;
        let queued: chrono::DateTime<chrono::Utc> =
            v["queuedAt"].as_str().unwrap().parse().unwrap();
        let waited = (chrono::Utc::now() - queued).num_milliseconds() as f64 / 1e3;
        assert!(waited > 1.4, "the wait keeps growing while held: {v}");
        last_wait = f64::max(last_wait, waited);
    }
    assert!(last_wait > 0.0);

    // Released (twice: a mode not held answers 204 as well): they match.
    for _ in 0..2 {
        let released = t.call(Method::DELETE, &hold_path, Some(&key), None).await;
        assert_eq!(released.status, StatusCode::NO_CONTENT, "{}", released.body);
    }
    let mode = t.call(Method::GET, &mode_path, Some(&key), None).await;
    assert!(mode.body["hold"].is_null(), "{}", mode.body);
    assert_eq!(mode.body["version"], 1);
    let views = t.poll_until(&searches, |v| v["status"] == "matched").await;
    assert_eq!(views[0]["match"]["matchId"], views[1]["match"]["matchId"]);
    worker.stop().await;

    // An unknown mode is 404 both ways.
    let missing = format!("/v1/projects/{p}/game-modes/nope/hold");
    for method in [Method::POST, Method::DELETE] {
        let a = t.call(method, &missing, Some(&key), None).await;
        a.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    }
}
