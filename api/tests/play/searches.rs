//! Starting searches: the errors of docs/searching.md on the REST start (the WebSocket
//! start shares the code, see `ws`), and searching again after an end.

use crate::harness::{duel, fast, set_free_quota, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;

on_both_pools!(
    search_start_errors,
    a_matched_ticket_is_spent_and_an_ended_one_searches_again,
    the_tier_quota_of_concurrent_searches_holds,
    ping_modes_refuse_rest
);

async fn search_start_errors(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mut short = duel("short");
    short["ticketTtlSeconds"] = json!(1);
    t.mode(&p, &key, short).await;

    // A token that is not a ticket's says so plainly, never that the
    // store lost data (that is said only when it may have).
    let plainly_invalid = |a: &crate::harness::Answer| {
        a.assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
        let detail = a.body["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("the ticket token is not valid") && !detail.contains("lost"),
            "{detail}"
        );
    };
    for bad in [
        "garbage",
        "prj_x.tkt_y.zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
    ] {
        t.rest_search(bad)
            .await
            .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    }
    plainly_invalid(&t.rest_search("garbage").await);
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    // A forged secret for a real ticket.
    let forged = format!("{}.{}", token.rsplit_once('.').unwrap().0, "A".repeat(43));
    plainly_invalid(&t.rest_search(&forged).await);
    plainly_invalid(
        &t.call(
            Method::GET,
            &format!("/v1/searches/{ticket}"),
            Some(&format!("Ticket {forged}")),
            None,
        )
        .await,
    );

    let a = t.rest_search(&token).await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    assert_eq!(a.body, json!({"ticketId": ticket, "status": "searching"}));
    t.rest_search(&token)
        .await
        .assert_problem(StatusCode::CONFLICT, "SEARCH_ALREADY_ACTIVE");

    // Two tickets of one player generated before either searched: the
    // second start is refused with the live ticket.
    let (_, first) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    let (_, second) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    assert_eq!(t.rest_search(&first).await.status, StatusCode::ACCEPTED);
    let a = t.rest_search(&second).await;
    a.assert_problem(StatusCode::CONFLICT, "PLAYER_ALREADY_SEARCHING");
    assert!(a.body["ticketId"].as_str().unwrap().starts_with("tkt_"));

    // GET/DELETE need the ticket's own token.
    let path = format!("/v1/searches/{ticket}");
    t.call(Method::GET, &path, None, None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    t.call(Method::GET, &path, Some(&format!("Ticket {first}")), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let a = t
        .call(Method::GET, &path, Some(&format!("Ticket {token}")), None)
        .await;
    assert_eq!(a.body["status"], "searching", "{}", a.body);

    // Expired tokens are invalid.
    let (_, expiring) = t.ticket_ok(&p, &key, solo("short", "p3")).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    t.rest_search(&expiring)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
}

async fn a_matched_ticket_is_spent_and_an_ended_one_searches_again(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let auth = format!("Ticket {token}");
    let path = format!("/v1/searches/{ticket}");

    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let a = t.call(Method::DELETE, &path, Some(&auth), None).await;
    assert_eq!(a.body["status"], "cancelled", "{}", a.body);
    // Ended unmatched: may search again.
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);

    // The worker claims it.
    t.claim_alone(&p, "duel", &ticket, "p1").await;
    t.rest_search(&token)
        .await
        .assert_problem(StatusCode::CONFLICT, "TICKET_ALREADY_MATCHED");
    // Claimed but not stored yet: still searching, the match pending
    // (a player is told `matched` only once the match is stored).
    let a = t.call(Method::GET, &path, Some(&auth), None).await;
    assert_eq!(a.body["status"], "searching", "{}", a.body);
    assert_eq!(
        a.body["waitingReason"]["code"], "MATCH_PENDING",
        "{}",
        a.body
    );
    // The wait is kept in the match, not stored yet.
    assert!(a.body["queuedAt"].is_null(), "{}", a.body);
    assert!(a.body["waitSeconds"].is_null(), "{}", a.body);
    t.store_match_alone(&p, "duel", &ticket, "p1").await;
    let a = t.call(Method::GET, &path, Some(&auth), None).await;
    assert_eq!(a.body["status"], "matched", "{}", a.body);
    assert_eq!(a.body["match"]["matchId"], "mat_1");
    assert_eq!(a.body["match"]["teams"], json!([["p1"]]), "{}", a.body);
    assert_eq!(a.body["match"]["player"]["team"], 0, "{}", a.body);
    assert_eq!(a.body["waitSeconds"], 2.5, "{}", a.body);
    assert!(a.body["queuedAt"].is_string(), "{}", a.body);
    t.call(Method::DELETE, &path, Some(&auth), None)
        .await
        .assert_problem(StatusCode::CONFLICT, "TICKET_ALREADY_MATCHED");
}

async fn the_tier_quota_of_concurrent_searches_holds(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    set_free_quota(&t, 2).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    for player in ["a", "b"] {
        let (_, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }
    let (_, token) = t.ticket_ok(&p, &key, solo("duel", "c")).await;
    t.rest_search(&token)
        .await
        .assert_problem(StatusCode::TOO_MANY_REQUESTS, "QUOTA_EXCEEDED");
}

async fn ping_modes_refuse_rest(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mut ping = duel("ping");
    ping["algorithm"] = json!({"type": "ping", "maxDelta": 50});
    t.mode(&p, &key, ping).await;
    let (_, token) = t
        .ticket_ok(&p, &key, json!({"gameMode": "ping", "playerId": "p1"}))
        .await;
    t.rest_search(&token)
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "PING_REQUIRES_WEBSOCKET");
}
