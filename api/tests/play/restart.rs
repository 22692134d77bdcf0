//! An API restart loses no search: a new state over the same Redis prefix
//! (a new connection) still sees every live search and its status.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::ws::{close_code, connect, next_json};
use axum::http::{Method, StatusCode};
use matchplane_api::{router, ApiConfig, AppState};
use matchplane_store::pool::{Ended, ModeKey, SearchState};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

on_both_pools!(
    a_restarted_api_keeps_every_search,
    a_stopping_instance_ends_its_sockets_searches
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
