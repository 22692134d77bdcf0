//! `playerSearchScope` (SPEC 9) through the API on both pool stores: set
//! with `PATCH /v1/projects/{projectId}/settings`, it makes a player
//! searching (or proposed) in one mode get `409 PLAYER_ALREADY_SEARCHING`
//! with the live `ticketId` and its `gameMode` in every other mode, at
//! ticket generation and at search start.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::json;

on_both_pools!(project_scope_holds_one_search_per_player_across_modes);

async fn project_scope_holds_one_search_per_player_across_modes(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, duel("ranked")).await;
    t.mode(&p, &key, duel("casual")).await;
    let settings = format!("/v1/projects/{p}/settings");

    // The default: one search per player per mode.
    let read = t.call(Method::GET, &settings, Some(&key), None).await;
    assert_eq!(read.body, json!({"playerSearchScope": "mode"}));
    let (_, ranked_token) = t.ticket_ok(&p, &key, solo("ranked", "ana")).await;
    assert_eq!(
        t.rest_search(&ranked_token).await.status,
        StatusCode::ACCEPTED
    );
    let (_, casual_token) = t.ticket_ok(&p, &key, solo("casual", "ana")).await;
    assert_eq!(
        t.rest_search(&casual_token).await.status,
        StatusCode::ACCEPTED
    );

    let set = t
        .call(
            Method::PATCH,
            &settings,
            Some(&key),
            Some(json!({"playerSearchScope": "project"})),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.body, json!({"playerSearchScope": "project"}));

    // bo searches in ranked: refused in casual, at generation and at start.
    let (bo_ranked, bo_token) = t.ticket_ok(&p, &key, solo("ranked", "bo")).await;
    assert_eq!(t.rest_search(&bo_token).await.status, StatusCode::ACCEPTED);
    let refused = t.ticket(&p, &key, solo("casual", "bo")).await;
    refused.assert_problem(StatusCode::CONFLICT, "PLAYER_ALREADY_SEARCHING");
    assert_eq!(refused.body["ticketId"], bo_ranked.as_str());
    assert_eq!(refused.body["gameMode"], "ranked");

    // cy takes a casual ticket before searching in ranked: its start in
    // casual is refused by the pool's add step.
    let (_, cy_casual) = t.ticket_ok(&p, &key, solo("casual", "cy")).await;
    let (cy_ranked, cy_token) = t.ticket_ok(&p, &key, solo("ranked", "cy")).await;
    assert_eq!(t.rest_search(&cy_token).await.status, StatusCode::ACCEPTED);
    let refused = t.rest_search(&cy_casual).await;
    refused.assert_problem(StatusCode::CONFLICT, "PLAYER_ALREADY_SEARCHING");
    assert_eq!(refused.body["ticketId"], cy_ranked.as_str());
    assert_eq!(refused.body["gameMode"], "ranked");

    // Once bo's search ends, bo may search in casual.
    let cancel = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/tickets/{bo_ranked}"),
            Some(&key),
            None,
        )
        .await;
    assert!(cancel.status.is_success(), "{}", cancel.body);
    let (_, bo_casual) = t.ticket_ok(&p, &key, solo("casual", "bo")).await;
    assert_eq!(t.rest_search(&bo_casual).await.status, StatusCode::ACCEPTED);

    // Bad values are refused naming the field; unknown fields too.
    let bad = t
        .call(
            Method::PATCH,
            &settings,
            Some(&key),
            Some(json!({"playerSearchScope": "world"})),
        )
        .await;
    assert!(bad.status.is_client_error(), "{}", bad.body);
    assert_eq!(bad.body["code"], "VALIDATION_ERROR", "{}", bad.body);
    let unknown = t
        .call(
            Method::PATCH,
            &settings,
            Some(&key),
            Some(json!({"scope": "mode"})),
        )
        .await;
    assert_eq!(unknown.body["code"], "VALIDATION_ERROR", "{}", unknown.body);
    assert!(
        unknown.body.to_string().contains("scope"),
        "{}",
        unknown.body
    );
    // A backend key may read but not change them.
    let backend = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/keys"),
            Some(&key),
            Some(json!({"name": "game server"})),
        )
        .await;
    assert_eq!(backend.status, StatusCode::CREATED, "{}", backend.body);
    let backend_key = format!("Bearer {}", backend.body["key"].as_str().unwrap());
    let forbidden = t
        .call(
            Method::PATCH,
            &settings,
            Some(&backend_key),
            Some(json!({"playerSearchScope": "mode"})),
        )
        .await;
    forbidden.assert_problem(StatusCode::FORBIDDEN, "FORBIDDEN");
    let read = t
        .call(Method::GET, &settings, Some(&backend_key), None)
        .await;
    assert_eq!(read.body, json!({"playerSearchScope": "project"}));
}
