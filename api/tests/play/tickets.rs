//! `POST /v1/projects/{projectId}/tickets`: the answer and every SPEC 4 error.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::json;

on_both_pools!(
    a_ticket_carries_an_unguessable_token,
    every_ticket_error_of_spec_4
);

async fn a_ticket_carries_an_unguessable_token(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let a = t.ticket(&p, &key, solo("duel", "p1")).await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    let ticket = a.body["ticketId"].as_str().unwrap();
    let token = a.body["token"].as_str().unwrap();
    assert!(ticket.starts_with("tkt_"));
    assert!(token.contains(ticket) && token.contains(&p));
    let secret = token.rsplit('.').next().unwrap();
    assert!(secret.len() * 6 >= 256, "{secret}");
    let expires =
        chrono::DateTime::parse_from_rfc3339(a.body["expiresAt"].as_str().unwrap()).unwrap();
    let ttl = expires.timestamp() - chrono::Utc::now().timestamp();
    assert!((598..=601).contains(&ttl), "{ttl}");
    let status = t.status(&p, &key, ticket).await;
    assert_eq!(status.body["status"], "created", "{}", status.body);
}

async fn every_ticket_error_of_spec_4(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mut solo_only = duel("solo-only");
    solo_only["parties"] = json!({"allowParties": false, "maxSize": 1, "keepTogether": true});
    t.mode(&p, &key, solo_only).await;
    let mut off = duel("off");
    off["enabled"] = json!(false);
    t.mode(&p, &key, off).await;

    let cases = [
        (
            solo("nope", "p1"),
            StatusCode::NOT_FOUND,
            "GAME_MODE_NOT_FOUND",
        ),
        (
            solo("off", "p1"),
            StatusCode::CONFLICT,
            "GAME_MODE_DISABLED",
        ),
        (
            json!({"gameMode": "duel", "playerId": "p1"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "MMR_REQUIRED",
        ),
        (
            json!({"gameMode": "duel", "playerId": "p1", "attributes": {"mmr": 3001}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "MMR_OUT_OF_RANGE",
        ),
        (
            json!({"gameMode": "solo-only", "playerId": "p1", "attributes": {"mmr": 1},
                "party": {"id": "x", "members": ["p1", "p2"]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "PARTIES_NOT_ENABLED",
        ),
        (
            json!({"gameMode": "duel", "playerId": "p1", "attributes": {"mmr": 1},
                "party": {"id": "x", "members": ["p1", "p2", "p3"]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "PARTY_TOO_LARGE",
        ),
        (
            json!({"gameMode": "duel", "playerId": "p1", "attributes": {"mmr": 1},
                "party": {"id": "x", "members": ["p2", "p3"]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INVALID_PARTY",
        ),
        (
            json!({"gameMode": "duel", "playerId": "p1", "attributes": {"mmr": 1},
                "party": {"id": "x", "members": ["p1", "p1"]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INVALID_PARTY",
        ),
        (
            json!({"gameMode": "duel", "playerId": "p1", "attributes": {"mmr": 1},
                "party": {"id": "", "members": ["p1"]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INVALID_PARTY",
        ),
        (
            solo("duel", ""),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION_ERROR",
        ),
        (
            solo("duel", &"x".repeat(129)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION_ERROR",
        ),
        (
            json!({"playerId": "p1"}),
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
        ),
    ];
    for (body, status, code) in cases {
        let a = t.ticket(&p, &key, body.clone()).await;
        a.assert_problem(status, code);
        assert!(!a.body.to_string().contains("token"), "{}", a.body);
    }

    // One live search per player per mode, already at generation.
    let (live, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let again = t.ticket(&p, &key, solo("duel", "p1")).await;
    again.assert_problem(StatusCode::CONFLICT, "PLAYER_ALREADY_SEARCHING");
    assert_eq!(again.body["ticketId"], live.as_str());
    // Another mode is another pool.
    t.ticket_ok(&p, &key, solo("solo-only", "p1")).await;

    // Another tenant's key on this project: 404, whatever the body.
    let (_, other_key) = t.project("free").await;
    t.ticket(&p, &other_key, solo("duel", "p9"))
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/tickets"),
        None,
        Some(solo("duel", "p9")),
    )
    .await
    .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
}
