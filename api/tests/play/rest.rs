//! REST poll liveness: a search not polled within the poll timeout (1 s in
//! tests, 30 s by default) ends `expired`; a polled one lives on.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, SearchState};
use std::time::Duration;

on_both_pools!(
    an_unpolled_rest_search_expires_and_a_polled_one_lives,
    a_rest_search_in_a_mode_switched_to_ping_fails_at_its_next_poll,
    a_ticket_that_ran_out_before_any_search_says_why,
);

async fn an_unpolled_rest_search_expires_and_a_polled_one_lives(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (polled, polled_token) = t.ticket_ok(&p, &key, solo("duel", "polled")).await;
    let (ghost, ghost_token) = t.ticket_ok(&p, &key, solo("duel", "ghost")).await;
    let (swept, swept_token) = t.ticket_ok(&p, &key, solo("duel", "swept")).await;
    for token in [&polled_token, &ghost_token, &swept_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let polled_path = format!("/v1/searches/{polled}");
    let auth = format!("Ticket {polled_token}");
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let a = t.call(Method::GET, &polled_path, Some(&auth), None).await;
        assert_eq!(a.body["status"], "searching", "{}", a.body);
    }
    // The late one's deadline passed, and no worker ended it: its client
    // is back, so its poll renews it. Ending a lapse is the worker's,
    // which holds off after Redis was out of reach, when nobody could
    // poll (docs/operations.md). Before, this poll ended it
    // `REST_POLL_LAPSED`, also a client that had polled through an outage.
    let a = t
        .call(
            Method::GET,
            &format!("/v1/searches/{ghost}"),
            Some(&format!("Ticket {ghost_token}")),
            None,
        )
        .await;
    assert_eq!(a.body["status"], "searching", "{}", a.body);
    // The worker's sweep ends the one nobody polls, and leaves the polled
    // ones.
    assert_eq!(t.sweep(unix_now()).await.expired, 1);
    let ghost_status = t.status(&p, &key, &ghost).await.body;
    assert_eq!(ghost_status["status"], "searching", "{ghost_status}");
    let mode = ModeKey::new(&p, "duel");
    let state = t.play.pool.search_state(&mode, &swept).await.unwrap();
    assert!(matches!(state, Some(SearchState::Ended(_))), "{state:?}");
    let status = t.status(&p, &key, &swept).await.body;
    assert_eq!(status["status"], "expired", "{status}");
    // The sweep only saw a deadline pass; the ticket had not expired, so
    // it was the poll's.
    assert_eq!(status["reason"], "REST_POLL_LAPSED", "{status}");
    assert_eq!(
        t.status(&p, &key, &polled).await.body["status"],
        "searching"
    );
    // Swept after its ticket's expiry: the ticket's time ran out.
    let expires_at = chrono::DateTime::parse_from_rfc3339(
        t.status(&p, &key, &polled).await.body["expiresAt"]
            .as_str()
            .unwrap(),
    )
    .unwrap()
    .timestamp() as f64;
    assert!(t.sweep(expires_at + 1.0).await.expired >= 1);
    let status = t.status(&p, &key, &polled).await.body;
    assert_eq!(status["status"], "expired", "{status}");
    assert_eq!(status["reason"], "TICKET_TTL", "{status}");
}

/// A mode switched to the Ping algorithm while REST searches wait: ping is
/// measured over the WebSocket only, so a REST search could never be
/// matched. Its next poll ends it `failed` `PING_REQUIRES_WEBSOCKET` (the
/// code a REST start in that mode gets), instead of leaving it waiting with
/// `PING_NOT_MEASURED` until its ticket expires.
async fn a_rest_search_in_a_mode_switched_to_ping_fails_at_its_next_poll(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "rest")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let mut ping = duel("duel");
    ping["algorithm"] = serde_json::json!({"type": "ping", "maxDelta": 50});
    let put = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            Some(ping),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    let polled = t
        .call(
            Method::GET,
            &format!("/v1/searches/{ticket}"),
            Some(&format!("Ticket {token}")),
            None,
        )
        .await;
    assert_eq!(polled.status, StatusCode::OK, "{}", polled.body);
    assert_eq!(polled.body["status"], "failed", "{}", polled.body);
    assert_eq!(
        polled.body["error"]["code"], "PING_REQUIRES_WEBSOCKET",
        "{}",
        polled.body
    );
    let state = t
        .play
        .pool
        .search_state(&ModeKey::new(&p, "duel"), &ticket)
        .await
        .unwrap();
    assert!(!matches!(state, Some(SearchState::Live(_))), "{state:?}");
}

/// A ticket whose time ran out before it ever searched reads `expired`
/// with `reason` `TICKET_TTL`, as a search its expiry ended does
/// (docs/searching.md, "Statuses"); the player's own poll with its token
/// is refused, the ticket being no longer valid.
async fn a_ticket_that_ran_out_before_any_search_says_why(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut mode = duel("duel");
    mode["ticketTtlSeconds"] = serde_json::json!(1);
    t.mode(&p, &key, mode).await;
    let (ticket, _token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "created", "{status}");
    assert!(status.get("reason").is_none(), "{status}");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "expired", "{status}");
    assert_eq!(status["reason"], "TICKET_TTL", "{status}");
}
