//! An API restart loses no search: a new state over the same Redis prefix
//! (a new connection) still sees every live search and its status.

use crate::acceptance::{accepting, propose};
use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::socket::{close_code, connect, next_json, until};
use axum::http::{Method, StatusCode};
use futures::SinkExt;
use matchplane_api::{router, ApiConfig, AppState};
use matchplane_store::pool::{Ended, ModeKey, SearchState};
use matchplane_store::tickets::{publish, StatusMessage};
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tower::ServiceExt;

on_both_pools!(
    a_restarted_api_keeps_every_search,
    a_stopping_instance_ends_its_sockets_searches,
    a_stopping_instance_never_counts_as_a_players_decline
);

async fn a_restarted_api_keeps_every_search(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mut live = Vec::new();
    for player in ["a", "b", "c"] {
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        live.push((ticket, token));
    }
    if pools == Pools::Memory {
        // In memory the pool dies with the process: nothing to restart into.
        return;
    }
    let play = Arc::new(TestApp::play_on(pools, &t.prefix, fast()).await);
    let state = AppState::new(t.db.clone(), ApiConfig::default()).with_play(play.clone());
    let restarted = router(state);
    drop(t.app.clone());
    let pool = play.pool.snapshot(&ModeKey::new(&p, "duel")).await.unwrap();
    assert_eq!(pool.len(), 3);
    for (ticket, token) in &live {
        let req = axum::http::Request::builder()
            .method(Method::GET)
            .uri(format!("/v1/searches/{ticket}"))
            .header("authorization", format!("Ticket {token}"))
            .body(axum::body::Body::empty())
            .unwrap();
        let response = restarted.clone().oneshot(req).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["status"], "searching", "{body}");
    }
}

/// A stopping API instance (a rolling restart) ends the searches of its
/// open WebSockets and closes each with 1001 (going away), so that its
/// client searches again with the same ticket on another instance. Before,
/// the socket was dropped unannounced and its search stayed live: the
/// reconnect was refused `SEARCH_ALREADY_ACTIVE` until the ticket expired,
/// and the search could be matched with nobody to tell.
async fn a_stopping_instance_ends_its_sockets_searches(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let mut ws = connect(addr, &token).await;
    // Its first message: the search is live.
    assert_eq!(next_json(&mut ws).await["type"], "searching");

    let instance = t.play.clone();
    let stop = tokio::spawn(async move { instance.sockets.stop(Duration::from_secs(5)).await });
    assert_eq!(close_code(&mut ws).await, 1001);
    assert_eq!(
        stop.await.unwrap(),
        0,
        "every socket ended within the grace"
    );
    let state = t
        .play
        .pool
        .search_state(&ModeKey::new(&p, "duel"), &ticket)
        .await;
    assert!(
        matches!(
            state.unwrap().and_then(SearchState::into_ended),
            Some(Ended::Cancelled)
        ),
        "the stopped socket's search ended cancelled"
    );

    // The same ticket searches again on another instance.
    let other = t.other_instance().await;
    let mut ws = connect(other.serve().await, &token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
}

/// An instance stopping (a rolling restart) while its socket's search is
/// in a proposal closes the proposal as the service's doing
/// (docs/acceptance.md, "How a proposal ends"): the player who had
/// accepted is not cooled down and searches again at once with the same
/// ticket on another instance; the other player is requeued with its
/// first `queuedAt`. Before, the stop counted as the player's decline:
/// the reconnect got `409 DECLINE_COOLDOWN`.
async fn a_stopping_instance_never_counts_as_a_players_decline(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let stopping = t.serve().await;
    let other = t.other_instance().await;
    let staying = other.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let (a, a_token) = t.ticket_ok(&p, &key, solo("duel", "a")).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let mut wa = connect(staying, &a_token).await;
    let mut wb = connect(stopping, &b_token).await;
    until(&mut wa, "searching").await;
    until(&mut wb, "searching").await;
    let a_queued_at = t.status(&p, &key, &a).await.body["queuedAt"].clone();

    let match_id = propose(&t, &p, &[&a, &b], &["a", "b"], &[&a, &b]).await;
    let proposed = StatusMessage::Proposed {
        match_id: match_id.clone(),
        accept_by: "2026-12-01T00:00:20.000Z".into(),
        accept_in_seconds: 20.0,
        teams: vec![vec!["a".into()], vec!["b".into()]],
        attributes: Default::default(),
    };
    publish(t.play.pool.as_ref(), &a, &proposed).await;
    publish(t.play.pool.as_ref(), &b, &proposed).await;
    until(&mut wa, "proposed").await;
    until(&mut wb, "proposed").await;
    wb.send(Message::Text(r#"{"type":"accept"}"#.into()))
        .await
        .unwrap();
    let mut accepted = false;
    for _ in 0..50 {
        let s = t.status(&p, &key, &b).await.body;
        if s["proposal"]["accepted"] == serde_json::json!([b.clone()]) {
            accepted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(accepted, "b's accept was recorded");

    let instance = t.play.clone();
    let stop = tokio::spawn(async move { instance.sockets.stop(Duration::from_secs(5)).await });
    assert_eq!(close_code(&mut wb).await, 1001);
    assert_eq!(stop.await.unwrap(), 0);
    until(&mut wa, "requeued").await;
    let a_status = t.status(&p, &key, &a).await.body;
    assert_eq!(a_status["status"], "searching", "{a_status}");
    assert_eq!(a_status["queuedAt"], a_queued_at, "a keeps its first wait");
    assert_eq!(t.status(&p, &key, &b).await.body["status"], "cancelled");

    // b is nobody's decliner: the same ticket searches again at once.
    let mut wb = connect(staying, &b_token).await;
    assert_eq!(next_json(&mut wb).await["type"], "searching");
}
