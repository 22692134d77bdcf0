//! Held matching with the worker (docs/game-modes.md, "Holding matching"): a
//! `backend` key holds a mode (the game's servers are full); its players
//! keep waiting with `MATCHING_HELD` and are not matched however long they
//! wait, the mode view and its stats show who held it and since when, the
//! version does not move; once released they match at the next cycle.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_worker::{run_worker_with_tickets, WorkerConfig};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The search view of `ticket` (a REST poll, keeping the search alive).
async fn view(t: &TestApp, ticket: &str, token: &str) -> Value {
    let a = t
        .call(
            Method::GET,
            &format!("/v1/searches/{ticket}"),
            Some(&format!("Ticket {token}")),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.body
}

/// Polls both searches (every 100 ms) until `done` holds for both views,
/// for at most 20 s; the last views.
async fn poll_until(
    t: &TestApp,
    searches: &[(String, String)],
    done: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let mut views = Vec::new();
        for (ticket, token) in searches {
            views.push(view(t, ticket, token).await);
        }
        if views.iter().all(&done) {
            return views;
        }
        assert!(Instant::now() < until, "never came: {views:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

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

    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(run_worker_with_tickets(
        WorkerConfig {
            reconcile_interval: Duration::from_millis(100),
            ..WorkerConfig::default()
        },
        t.play.pool.clone(),
        Some(t.play.tickets.clone()),
        t.db.clone(),
        shutdown.clone(),
    ));
    let mut searches = Vec::new();
    for player in ["ana", "bo"] {
        let (ticket, token) = t
            .ticket_ok(&p, &key, json!({"gameMode": "duel", "playerId": player}))
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        searches.push((ticket, token));
    }
    let is_held = |v: &Value| v["waitingReason"]["code"] == "MATCHING_HELD";
    poll_until(&t, &searches, is_held).await;
    // Many cycles later: still waiting, still held, nobody failed.
    let mut last_wait = 0.0;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        for (ticket, token) in &searches {
            let v = view(&t, ticket, token).await;
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
        let v = view(&t, ticket, token).await;
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
    let views = poll_until(&t, &searches, |v| v["status"] == "matched").await;
    assert_eq!(views[0]["match"]["matchId"], views[1]["match"]["matchId"]);
    shutdown.cancel();
    worker.await.unwrap().unwrap();

    // An unknown mode is 404 both ways.
    let missing = format!("/v1/projects/{p}/game-modes/nope/hold");
    for method in [Method::POST, Method::DELETE] {
        let a = t.call(method, &missing, Some(&key), None).await;
        a.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    }
}
