//! `playerSearchScope` (docs/acceptance.md) through the API on both pool stores: set
//! with `PATCH /v1/projects/{projectId}/settings`, it makes a player
//! searching (or proposed) in one mode get `409 PLAYER_ALREADY_SEARCHING`
//! with the live `ticketId` and its `gameMode` in every other mode, at
//! ticket generation and at search start.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_store::pool::{Claim, ClaimOutcome, ModeKey};
use serde_json::json;
use std::time::Duration;

on_both_pools!(
    project_scope_holds_one_search_per_player_across_modes,
    project_scope_covers_the_assignment_wait,
);

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

/// Claims `ticket` of `player` into a match of `mode` and stores it made,
/// with its ticket, as the worker would; returns the match id.
async fn matched(t: &TestApp, p: &str, mode: &str, ticket: &str, player: &str) -> String {
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let key = ModeKey::new(p, mode);
    let pool = &t.play.pool;
    let lease = pool
        .acquire_lease(&key, "w", Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    let claim = Claim {
        match_id: match_id.clone(),
        ticket_ids: vec![ticket.to_owned()],
        player_ids: vec![player.to_owned()],
        record_json: "{}".into(),
    };
    let out = pool.claim(&key, lease, &claim).await.unwrap();
    assert!(matches!(out, ClaimOutcome::Claimed { .. }), "{out:?}");
    pool.release_lease(&key, lease).await.unwrap();
    let now = chrono::Utc::now();
    let row = matchplane_store::entities::match_::Model {
        id: match_id.clone(),
        project_id: p.to_owned(),
        game_mode: mode.to_owned(),
        game_mode_version: 1,
        teams: json!([{"index": 0, "meanMmr": 1500.0, "players": [{"playerId": player,
            "ticketId": ticket, "partyId": null, "mmr": 1500.0, "pingMs": null,
            "waitSeconds": 1.0}]}]),
        quality: json!({"mmrSpread": 0.0, "teamImbalance": 0.0}),
        created_at: now,
        match_shape: None,
        seats_open: None,
        region: None,
        status: "made".into(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: None,
    };
    matchplane_store::repos::matches::insert_if_absent(&t.db, vec![row])
        .await
        .unwrap();
    let seat = matchplane_store::entities::match_ticket::Model {
        ticket_id: ticket.to_owned(),
        match_id: match_id.clone(),
        project_id: p.to_owned(),
        game_mode: mode.to_owned(),
        player_id: player.to_owned(),
        token_hash: "00".into(),
        created_at: 0.0,
        expires_at: 4e9,
        data: None,
    };
    matchplane_store::repos::match_tickets::insert_if_absent(&t.db, vec![seat])
        .await
        .unwrap();
    match_id
}

/// Under the `project` scope a player whose match waits for its assignment
/// is in no queue: a ticket or a search in any mode of the project is
/// refused (`409 PLAYER_IN_MATCH` naming the match, the matched ticket
/// and its mode) until the match is assigned, released or unassigned. A mode
/// without `assignment` holds nobody once matched.
async fn project_scope_covers_the_assignment_wait(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    let mut ranked = duel("ranked");
    ranked["assignment"] = json!({"waitSeconds": 60});
    t.mode(&p, &key, ranked).await;
    t.mode(&p, &key, duel("casual")).await;
    let set = t
        .call(
            Method::PATCH,
            &format!("/v1/projects/{p}/settings"),
            Some(&key),
            Some(json!({"playerSearchScope": "project"})),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);

    // A casual ticket taken before the match, and one in a mode without
    // assignment matched for another player.
    let (_, early_casual) = t.ticket_ok(&p, &key, solo("casual", "ana")).await;
    let (ranked_ticket, token) = t.ticket_ok(&p, &key, solo("ranked", "ana")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let match_id = matched(&t, &p, "ranked", &ranked_ticket, "ana").await;
    let (bo_casual, bo_token) = t.ticket_ok(&p, &key, solo("casual", "bo")).await;
    assert_eq!(t.rest_search(&bo_token).await.status, StatusCode::ACCEPTED);
    matched(&t, &p, "casual", &bo_casual, "bo").await;

    for mode in ["casual", "ranked"] {
        let refused = t.ticket(&p, &key, solo(mode, "ana")).await;
        refused.assert_problem(StatusCode::CONFLICT, "PLAYER_IN_MATCH");
        assert_eq!(refused.body["matchId"], match_id.as_str());
        assert_eq!(refused.body["ticketId"], ranked_ticket.as_str());
        assert_eq!(refused.body["gameMode"], "ranked");
    }
    let refused = t.rest_search(&early_casual).await;
    refused.assert_problem(StatusCode::CONFLICT, "PLAYER_IN_MATCH");
    assert_eq!(refused.body["matchId"], match_id.as_str());
    assert_eq!(refused.body["ticketId"], ranked_ticket.as_str());
    // bo's match in a mode without assignment holds nobody.
    let (_, bo_ranked) = t.ticket_ok(&p, &key, solo("ranked", "bo")).await;
    assert_eq!(t.rest_search(&bo_ranked).await.status, StatusCode::ACCEPTED);

    // Released: ana is free again.
    let released = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{match_id}/release"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    assert_eq!(
        t.rest_search(&early_casual).await.status,
        StatusCode::ACCEPTED
    );
}
