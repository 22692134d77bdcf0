//! The studio's side: a ticket's status through its life, cancel, ending
//! all of a player's searches, and another tenant's 404.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_store::pool::{EndOutcome, ModeKey};
use serde_json::json;

on_both_pools!(
    status_follows_the_search,
    a_players_searches_end_together,
    found_and_needed_are_top_level
);

/// The worker stores `found` and `needed` beside the reason's `code`; the
/// studio's and the REST client's statuses show them top-level.
async fn found_and_needed_are_top_level(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let stored = json!({"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 1, "seatsNeeded": 2,
        "found": 1, "needed": 2});
    t.play
        .pool
        .set_waiting_reasons(
            &ModeKey::new(&p, "duel"),
            &[(ticket.clone(), stored.to_string())],
        )
        .await
        .unwrap();
    let studio = t.status(&p, &key, &ticket).await;
    assert_eq!(studio.body["found"], 1, "{}", studio.body);
    assert_eq!(studio.body["needed"], 2, "{}", studio.body);
    assert_eq!(
        studio.body["waitingReason"],
        json!({"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 1, "seatsNeeded": 2})
    );
    let auth = format!("Ticket {token}");
    let client = t
        .call(
            Method::GET,
            &format!("/v1/searches/{ticket}"),
            Some(&auth),
            None,
        )
        .await;
    assert_eq!(client.body["status"], "searching", "{}", client.body);
    assert_eq!(
        (client.body["found"].clone(), client.body["needed"].clone()),
        (json!(1), json!(2))
    );
}

async fn status_follows_the_search(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let mode = ModeKey::new(&p, "duel");
    let reason = json!({"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 1, "seatsNeeded": 2});
    t.play
        .pool
        .set_waiting_reasons(&mode, &[(ticket.clone(), reason.to_string())])
        .await
        .unwrap();
    let a = t.status(&p, &key, &ticket).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body["status"], "searching");
    assert_eq!(a.body["gameMode"], "duel");
    assert!(
        a.body["queuedAt"].is_string() && a.body["waitSeconds"].is_number(),
        "{}",
        a.body
    );
    assert_eq!(a.body["waitingReason"], reason);
    // A REST search has no ping: the field is there, null (docs/searching.md lists it
    // in every status).
    assert!(
        a.body["pingMs"].is_null() && a.body.get("pingMs").is_some(),
        "{}",
        a.body
    );

    // Another tenant sees nothing.
    let (other, other_key) = t.project("free").await;
    t.status(&p, &other_key, &ticket)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    t.status(&other, &other_key, &ticket)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    t.call(
        Method::DELETE,
        &format!("/v1/projects/{other}/tickets/{ticket}"),
        Some(&other_key),
        None,
    )
    .await
    .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");

    let a = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/tickets/{ticket}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(a.body["status"], "cancelled", "{}", a.body);
    // An ended search keeps when it started and how long it waited.
    assert!(a.body["queuedAt"].is_string(), "{}", a.body);
    assert!(
        a.body["waitSeconds"].as_f64().is_some_and(|w| w >= 0.0),
        "{}",
        a.body
    );
    assert!(
        a.body.get("pingMs").is_some_and(|v| v.is_null()),
        "{}",
        a.body
    );

    // A failure carries its error.
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let failed = EndOutcome::Failed {
        code: "GAME_MODE_DISABLED".into(),
        message: "off".into(),
    };
    t.play
        .pool
        .end_search(&mode, &ticket, &failed)
        .await
        .unwrap();
    let a = t.status(&p, &key, &ticket).await;
    assert_eq!(a.body["status"], "failed");
    assert!(a.body["queuedAt"].is_string(), "{}", a.body);
    assert_eq!(
        a.body["error"],
        json!({"code": "GAME_MODE_DISABLED", "message": "off"})
    );
}

async fn a_players_searches_end_together(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    t.mode(&p, &key, duel("ranked")).await;
    let mut tickets = Vec::new();
    for mode in ["duel", "ranked"] {
        let (ticket, token) = t.ticket_ok(&p, &key, solo(mode, "p1")).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        tickets.push(ticket);
    }
    let (bystander, token) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let a = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/players/p1/searches"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let mut cancelled: Vec<String> = serde_json::from_value(a.body["cancelled"].clone()).unwrap();
    cancelled.sort();
    tickets.sort();
    assert_eq!(cancelled, tickets);
    for ticket in &tickets {
        assert_eq!(t.status(&p, &key, ticket).await.body["status"], "cancelled");
    }
    assert_eq!(
        t.status(&p, &key, &bystander).await.body["status"],
        "searching"
    );
    // The player may search again at once.
    let (_, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
}
