//! An API restart loses no search: a new state over the same Redis prefix
//! (a new connection) still sees every live search and its status.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::{router, ApiConfig, AppState};
use matchplane_store::pool::ModeKey;
use std::sync::Arc;
use tower::ServiceExt;

on_both_pools!(a_restarted_api_keeps_every_search);

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
