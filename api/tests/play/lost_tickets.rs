//! A matched ticket stays readable when Redis loses its data (docs/architecture.md#where-each-rule-lives): the
//! worker keeps each seated ticket's token hash with the stored match, so
//! the REST poll and the studio's ticket status still answer `matched`
//! with the match, a start with it (REST or WebSocket) is refused as matched, and a wrong token
//! is still refused.

use crate::harness::{redis_url, Pools, TestApp};
use axum::http::{Method, StatusCode};
use serde_json::json;
use std::time::{Duration, Instant};

/// The REST poll of `ticket` with `token`.
async fn poll(t: &TestApp, ticket: &str, token: &str) -> crate::harness::Answer {
    let auth = format!("Ticket {token}");
    t.call(
        Method::GET,
        &format!("/v1/searches/{ticket}"),
        Some(&auth),
        None,
    )
    .await
}

/// Polls `ticket` until it reads `matched` (20 s at most); its match id.
async fn matched_id(t: &TestApp, ticket: &str, token: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = poll(t, ticket, token).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        if answer.body["status"] == "matched" {
            return answer.body["match"]["matchId"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < until, "never matched: {}", answer.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A Redis app whose `duel` mode matched two REST searches (the worker
/// stopped after): the app, project, key, the two (ticket, token) seats
/// and the match's id.
async fn matched_pair() -> (TestApp, String, String, Vec<(String, String)>, String) {
    let t = TestApp::new(Pools::Redis, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(
        &p,
        &key,
        json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 0.5, "algorithm": {"type": "fifo"},
            "ticketTtlSeconds": 600}),
    )
    .await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let mut seats = Vec::new();
    for player in ["ana", "bo"] {
        let (ticket, token) = t
            .ticket_ok(&p, &key, json!({"gameMode": "duel", "playerId": player}))
            .await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        seats.push((ticket, token));
    }
    let match_id = matched_id(&t, &seats[0].0, &seats[0].1).await;
    assert_eq!(matched_id(&t, &seats[1].0, &seats[1].1).await, match_id);
    worker.stop().await;
    (t, p, key, seats, match_id)
}

#[tokio::test]
async fn a_matched_ticket_stays_readable_after_redis_loses_its_data() {
    let (t, p, key, seats, match_id) = matched_pair().await;

    // Redis loses everything of this test: tickets, pools, claims.
    let (url, prefix) = (redis_url(), t.prefix.clone());
    tokio::task::spawn_blocking(move || {
        matchplane_store::pool::redis::delete_prefix_blocking(&url, &prefix)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(t.play.tickets.get(&p, &seats[0].0).await.unwrap().is_none());

    for (ticket, token) in &seats {
        let answer = poll(&t, ticket, token).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_eq!(answer.body["status"], "matched", "{}", answer.body);
        assert_eq!(answer.body["match"]["matchId"], match_id, "{}", answer.body);
        let studio = t.status(&p, &key, ticket).await;
        assert_eq!(studio.status, StatusCode::OK, "{}", studio.body);
        assert_eq!(studio.body["status"], "matched", "{}", studio.body);
        assert_eq!(studio.body["match"]["matchId"], match_id, "{}", studio.body);
    }

    // A start with it (REST here, the WebSocket's is the same step) is
    // refused as matched, as before the loss: it never searches again.
    let (ticket, token) = &seats[0];
    t.rest_search(token)
        .await
        .assert_problem(StatusCode::CONFLICT, "TICKET_ALREADY_MATCHED");

    // A wrong secret for a kept ticket is still refused.
    let (routed, _) = token.rsplit_once('.').unwrap();
    let forged = format!("{routed}.{}", "A".repeat(43));
    poll(&t, ticket, &forged)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    t.rest_search(&forged)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");

    // The WebSocket start answers the same.
    let addr = t.serve().await;
    for (token, status) in [
        (token, StatusCode::CONFLICT),
        (&forged, StatusCode::UNAUTHORIZED),
    ] {
        let url = format!("ws://{addr}/v1/search?ticket={token}");
        match tokio_tungstenite::connect_async(url).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status().as_u16(), status.as_u16());
            }
            Err(other) => panic!("expected an HTTP refusal, got {other}"),
            Ok(_) => panic!("a matched ticket searched again"),
        }
    }
}

/// A released match's ticket whose record the store lost (Redis lost its
/// data, or `matchplane dev` restarted) cannot search again: the start is
/// `401 TICKET_INVALID` saying the ticket was lost, never `409
/// TICKET_ALREADY_MATCHED`, which would tell the client its ticket is
/// spent in a match that no longer holds it.
#[tokio::test]
async fn a_released_ticket_the_store_lost_is_told_to_take_a_new_one() {
    let (t, p, key, seats, match_id) = matched_pair().await;
    let (url, prefix) = (redis_url(), t.prefix.clone());
    tokio::task::spawn_blocking(move || {
        matchplane_store::pool::redis::delete_prefix_blocking(&url, &prefix)
    })
    .await
    .unwrap()
    .unwrap();

    let released = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{match_id}/release"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    let (ticket, token) = &seats[0];
    assert_eq!(poll(&t, ticket, token).await.body["status"], "released");
    let refused = t.rest_search(token).await;
    refused.assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    let detail = refused.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("released"), "{}", refused.body);
}
