//! A search started on another API instance than the one that generated its
//! ticket: over REST and the WebSocket, with every error of docs/searching.md (the start
//! script's path on Redis), and, on Redis, what a start costs in commands.

use crate::harness::{call, duel, fast, redis_url, set_free_quota, solo, Instance, Pools, TestApp};
use crate::on_both_pools;
use crate::proxy::CountingProxy;
use axum::http::{Method, StatusCode};
use matchplane_api::play;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

on_both_pools!(
    a_search_starts_elsewhere_and_keeps_every_error_code,
    a_search_starts_elsewhere_over_the_websocket,
    the_quota_holds_for_a_start_elsewhere
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_is_four_redis_commands_and_answers_before_the_last() {
    start_commands().await
}

/// The commands sent through `proxy` since `before`, once they stopped
/// growing: a start's last step (its project's count, see the store's
/// `lane`) is sent after its answer.
async fn settled(proxy: &CountingProxy, before: usize) -> usize {
    let mut last = proxy.commands() - before;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = proxy.commands() - before;
        if now == last {
            return now;
        }
        last = now;
    }
}

/// `token` with its mode part replaced by `mode`.
fn with_mode(token: &str, mode: &str) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 4, "a token with its mode");
    format!("{}.{mode}.{}.{}", parts[0], parts[2], parts[3])
}

/// Creates `modes` and has `b` generate a ticket in each (so it has seen
/// them, as an instance serving traffic has).
async fn modes_seen_by(t: &TestApp, b: &Instance, p: &str, key: &str, modes: &[(&str, Value)]) {
    for (name, body) in modes {
        t.mode(p, key, body.clone()).await;
        let player = format!("warm-{name}");
        b.ticket_ok(
            p,
            key,
            json!({"gameMode": name, "playerId": player, "attributes": {"mmr": 1500}}),
        )
        .await;
    }
}

async fn a_search_starts_elsewhere_and_keeps_every_error_code(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let b = t.other_instance().await;
    let mut short = duel("short");
    short["ticketTtlSeconds"] = json!(1);
    let modes = [
        ("duel", duel("duel")),
        ("other", duel("other")),
        ("short", short),
    ];
    modes_seen_by(&t, &b, &p, &key, &modes).await;

    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    // Bad tokens of a real ticket: a forged secret, the mode changed to a
    // mode this instance knows, to one it does not (to one that refuses
    // REST: see the WebSocket test).
    let forged = format!("{}.{}", token.rsplit_once('.').unwrap().0, "A".repeat(43));
    for bad in [
        forged,
        with_mode(&token, "other"),
        with_mode(&token, "nope"),
        "garbage".to_owned(),
    ] {
        b.rest_search(&bad)
            .await
            .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    }
    let a = b.rest_search(&token).await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    assert_eq!(a.body, json!({"ticketId": ticket, "status": "searching"}));
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "searching", "{status}");
    assert_eq!(status["gameMode"], "duel");
    for instance in [&b.app, &t.app] {
        let body = json!({ "ticket": token });
        call(instance, Method::POST, "/v1/searches", None, Some(body))
            .await
            .assert_problem(StatusCode::CONFLICT, "SEARCH_ALREADY_ACTIVE");
    }
    // The search polled on the instance that started it.
    let auth = format!("Ticket {token}");
    let path = format!("/v1/searches/{ticket}");
    let a = call(&b.app, Method::GET, &path, Some(&auth), None).await;
    assert_eq!(a.body["status"], "searching", "{}", a.body);

    // One live search per player: the second ticket gets the first's id.
    let (first_id, first) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    let (_, second) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    assert_eq!(t.rest_search(&first).await.status, StatusCode::ACCEPTED);
    let a = b.rest_search(&second).await;
    a.assert_problem(StatusCode::CONFLICT, "PLAYER_ALREADY_SEARCHING");
    assert_eq!(a.body["ticketId"], json!(first_id));

    // A matched ticket is spent.
    t.claim_alone(&p, "duel", &ticket, "p1").await;
    b.rest_search(&token)
        .await
        .assert_problem(StatusCode::CONFLICT, "TICKET_ALREADY_MATCHED");

    // A disabled mode: 409 for its ticket's token, 401 for a forged one.
    let (_, in_other) = t.ticket_ok(&p, &key, solo("other", "p4")).await;
    let mut off = duel("other");
    off["enabled"] = json!(false);
    let path = format!("/v1/projects/{p}/game-modes/other");
    let a = t.call(Method::PUT, &path, Some(&key), Some(off)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let (_, expiring) = t.ticket_ok(&p, &key, solo("short", "p5")).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    b.rest_search(&in_other)
        .await
        .assert_problem(StatusCode::CONFLICT, "GAME_MODE_DISABLED");
    let forged = format!(
        "{}.{}",
        in_other.rsplit_once('.').unwrap().0,
        "A".repeat(43)
    );
    b.rest_search(&forged)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    // An expired ticket's token.
    b.rest_search(&expiring)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
}

async fn a_search_starts_elsewhere_over_the_websocket(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let b = t.other_instance().await;
    let mut ping = duel("ping");
    ping["algorithm"] = json!({"type": "ping", "maxDelta": 50});
    modes_seen_by(&t, &b, &p, &key, &[("duel", duel("duel")), ("ping", ping)]).await;
    let addr = b.serve().await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    // Ping modes refuse REST; a token whose mode was changed to one is
    // still refused as invalid first.
    let (_, pinged) = t
        .ticket_ok(&p, &key, json!({"gameMode": "ping", "playerId": "p3"}))
        .await;
    b.rest_search(&pinged)
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "PING_REQUIRES_WEBSOCKET");
    b.rest_search(&with_mode(&token, "ping"))
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    let refused = with_mode(&token, "duel2");
    match tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={refused}")).await
    {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 401)
        }
        other => panic!("expected a 401 refusal, got {:?}", other.map(|_| ())),
    }
    let mut ws = crate::socket::connect(addr, &token).await;
    let first = crate::socket::next_json(&mut ws).await;
    assert_eq!(first["type"], "searching", "{first}");
    assert_eq!(first["ticketId"], json!(ticket));
    assert_eq!(first["gameMode"], "duel");
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "searching", "{status}");
}

async fn the_quota_holds_for_a_start_elsewhere(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    set_free_quota(&t, 2).await;
    let (p, key) = t.project("free").await;
    let b = t.other_instance().await;
    modes_seen_by(&t, &b, &p, &key, &[("duel", duel("duel"))]).await;
    for player in ["a", "b"] {
        let (_, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        let a = b.rest_search(&token).await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    }
    let (_, token) = t.ticket_ok(&p, &key, solo("duel", "c")).await;
    b.rest_search(&token)
        .await
        .assert_problem(StatusCode::TOO_MANY_REQUESTS, "QUOTA_EXCEEDED");
}

/// Counts the commands instance B sends Redis (through a proxy) for each
/// kind of start: the ticket's record read at the same time as the
/// project's check (quota, the mode registered), the mode's add script, the
/// project's count (each mode's pool and its project's count sit in
/// different Redis Cluster slots).
async fn start_commands() {
    let t = TestApp::new(Pools::Redis, fast()).await;
    let (p, key) = t.project("free").await;
    let proxy = CountingProxy::start(&redis_url()).await;
    let b_play = play::connect_redis(&proxy.url(), &t.prefix, fast())
        .await
        .unwrap();
    let b = Instance::over(&t.db, Arc::new(b_play));
    modes_seen_by(&t, &b, &p, &key, &[("duel", duel("duel"))]).await;
    // Every script loaded once (Redis keeps them), every cache warm.
    let (_, warm) = t.ticket_ok(&p, &key, solo("duel", "warm")).await;
    assert_eq!(b.rest_search(&warm).await.status, StatusCode::ACCEPTED);
    let (_, here) = b.ticket_ok(&p, &key, solo("duel", "warm-here")).await;
    assert_eq!(b.rest_search(&here).await.status, StatusCode::ACCEPTED);

    // Generated elsewhere: the ticket's GET and the project's quota read
    // (one round trip), the add script, and the project's count, sent
    // after the answer.
    settled(&proxy, 0).await;
    let (_, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let before = proxy.commands();
    assert_eq!(b.rest_search(&token).await.status, StatusCode::ACCEPTED);
    assert!(proxy.commands() - before <= 4, "a start from elsewhere");
    assert_eq!(settled(&proxy, before).await, 4, "a start from elsewhere");
    assert_eq!(b.play.pool.count_live(&p).await.unwrap(), 3);

    // Generated here.
    let (_, token) = b.ticket_ok(&p, &key, solo("duel", "p2")).await;
    settled(&proxy, 0).await;
    let before = proxy.commands();
    assert_eq!(b.rest_search(&token).await.status, StatusCode::ACCEPTED);
    assert_eq!(settled(&proxy, before).await, 4, "a start from here");

    // A refusal from the add script leaves the count alone, and reads the
    // live search's deadline (a search the previous release left without
    // a holder gives way; docs/deployment.md, "Upgrading"): four.
    let before = proxy.commands();
    let a = b.rest_search(&token).await;
    a.assert_problem(StatusCode::CONFLICT, "SEARCH_ALREADY_ACTIVE");
    assert_eq!(settled(&proxy, before).await, 4, "a refused start");
}
