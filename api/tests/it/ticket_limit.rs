//! `maxPendingTickets`: seeded per tier, shown and edited through the
//! tiers API, and `429 TICKET_LIMIT_EXCEEDED` once a project holds that
//! many tickets generated and not yet searching; one cancelled before it
//! searched is revoked, which frees its place.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::json;

async fn pending_tickets_are_bounded_by_the_tier(backend: Backend) {
    let t = TestApp::new(backend).await;
    for (tier, max) in [
        ("free", 10_000),
        ("pro", 1_000_000),
        ("enterprise", 20_000_000),
    ] {
        let shown = t
            .call(
                Method::GET,
                &format!("/v1/tiers/{tier}"),
                Some(OPERATOR),
                None,
            )
            .await;
        assert_eq!(shown.body["maxPendingTickets"], max, "{}", shown.body);
    }
    // A tier of two pending tickets; written without the field, it keeps it.
    let tier = json!({
        "minCycleDurationSeconds": 1, "minBaseTolerance": 0, "minExpansionMultiplier": 1,
        "maxMatchSize": 16, "maxGameModes": 3, "maxConcurrentSearches": 100,
        "requestsPerSecond": 1000, "maxPendingTickets": 2
    });
    let put = t
        .call(
            Method::PUT,
            "/v1/tiers/tiny",
            Some(OPERATOR),
            Some(tier.clone()),
        )
        .await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let mut without = tier.clone();
    without.as_object_mut().unwrap().remove("maxPendingTickets");
    let kept = t
        .call(Method::PUT, "/v1/tiers/tiny", Some(OPERATOR), Some(without))
        .await;
    assert_eq!(kept.body["maxPendingTickets"], 2, "{}", kept.body);

    let p = t.project("tiny").await;
    let (_, key) = t.key(&p).await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(mode("duel")),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let tickets = format!("/v1/projects/{p}/tickets");
    let generate =
        |player: &str| json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": 1500}});
    let mut ids = Vec::new();
    let mut tokens = Vec::new();
    for player in ["p1", "p2"] {
        let a = t
            .call(Method::POST, &tickets, Some(&key), Some(generate(player)))
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        ids.push(a.body["ticketId"].as_str().unwrap().to_owned());
        tokens.push(a.body["token"].as_str().unwrap().to_owned());
    }
    let over = t
        .call(Method::POST, &tickets, Some(&key), Some(generate("p3")))
        .await;
    over.assert_problem(StatusCode::TOO_MANY_REQUESTS, "TICKET_LIMIT_EXCEEDED");
    let detail = over.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("maxPendingTickets"), "{detail}");

    // Cancelled before it searched: revoked, so its place is free again
    // and its token can no longer start a search (else generating and
    // cancelling would hold any number of usable tickets).
    let cancelled = t
        .call(
            Method::DELETE,
            &format!("{tickets}/{}", ids[0]),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.body);
    assert_eq!(cancelled.body["status"], "cancelled", "{}", cancelled.body);
    let again = t
        .call(Method::POST, &tickets, Some(&key), Some(generate("p3")))
        .await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    let start = |token: &str| json!({ "ticket": token });
    let revoked = t
        .call(Method::POST, "/v1/searches", None, Some(start(&tokens[0])))
        .await;
    revoked.assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    let read = t
        .call(
            Method::GET,
            &format!("{tickets}/{}", ids[0]),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(read.status, StatusCode::NOT_FOUND, "{}", read.body);
    // A ticket that searched is not revoked by the cancel of its search:
    // it may search again, and never counted as pending since its start.
    let started = t
        .call(Method::POST, "/v1/searches", None, Some(start(&tokens[1])))
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED, "{}", started.body);
    let ended = t
        .call(
            Method::DELETE,
            &format!("{tickets}/{}", ids[1]),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ended.body["status"], "cancelled", "{}", ended.body);
    let resumed = t
        .call(Method::POST, "/v1/searches", None, Some(start(&tokens[1])))
        .await;
    assert_eq!(resumed.status, StatusCode::ACCEPTED, "{}", resumed.body);

    // The operator raises the limit: effective at once.
    let mut raised = tier;
    raised["maxPendingTickets"] = json!(3);
    t.call(Method::PUT, "/v1/tiers/tiny", Some(OPERATOR), Some(raised))
        .await;
    let fourth = t
        .call(Method::POST, &tickets, Some(&key), Some(generate("p4")))
        .await;
    assert_eq!(fourth.status, StatusCode::CREATED, "{}", fourth.body);
}

on_both!(pending_tickets_are_bounded_by_the_tier);
