//! `POST /v1/projects/{projectId}/tickets`: the answer and every docs/searching.md error.

use crate::harness::{duel, fast, solo, Pools, TestApp, OPERATOR};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;

on_both_pools!(
    a_ticket_carries_an_unguessable_token,
    every_ticket_error_of_spec_4,
    a_mode_change_is_seen_here_at_once_and_elsewhere_within_a_second,
    a_revoked_key_is_refused_here_at_once_and_elsewhere_within_a_second,
    a_change_through_an_escaped_path_is_seen_at_once,
    readiness_names_the_live_store,
    a_block_list_naming_the_tickets_own_player_or_party_is_refused
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
        // Not printable: blank, or only invisible characters.
        (
            solo("duel", " "),
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION_ERROR",
        ),
        (
            solo("duel", "\u{200B}"),
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

    // Every failure at once: the player's, then each attribute's.
    let many = t
        .ticket(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": " ",
                "attributes": {"mmr": 3001, "latencies": {"Bad": 1}, "data": [1]}}),
        )
        .await;
    assert_eq!(
        many.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        many.body
    );
    let fields: Vec<_> = many.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("playerId", "VALIDATION_ERROR"),
            ("attributes.mmr", "MMR_OUT_OF_RANGE"),
            ("attributes.latencies.Bad", "VALIDATION_ERROR"),
            ("attributes.data", "VALIDATION_ERROR"),
        ]
    );

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

/// Replaces the `duel` mode at `path` with a disabled one.
async fn disable_duel(t: &TestApp, path: &str, key: &str) {
    let mut off = duel("duel");
    off["enabled"] = json!(false);
    let a = t.call(Method::PUT, path, Some(key), Some(off)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

async fn a_mode_change_is_seen_here_at_once_and_elsewhere_within_a_second(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    // Another API instance over the same database, its cache warmed.
    let other = t.other_instance().await;
    let other_ticket = |player: &'static str| {
        let (other, p, key) = (&other, &p, &key);
        async move { other.ticket(p, key, solo("duel", player)).await.status }
    };
    assert_eq!(other_ticket("o1").await, StatusCode::CREATED);
    t.ticket_ok(&p, &key, solo("duel", "p1")).await;

    disable_duel(&t, &format!("/v1/projects/{p}/game-modes/duel"), &key).await;
    // This instance made the change: at once.
    t.ticket(&p, &key, solo("duel", "p2"))
        .await
        .assert_problem(StatusCode::CONFLICT, "GAME_MODE_DISABLED");
    // The other instance: within a second.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(other_ticket("o2").await, StatusCode::CONFLICT);
}

async fn a_revoked_key_is_refused_here_at_once_and_elsewhere_within_a_second(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    // Another API instance over the same database, the key cached there.
    let other = t.other_instance().await;
    let other_ticket = |player: &'static str| {
        let (other, p, key) = (&other, &p, &key);
        async move { other.ticket(p, key, solo("duel", player)).await.status }
    };
    assert_eq!(other_ticket("o1").await, StatusCode::CREATED);
    t.ticket_ok(&p, &key, solo("duel", "p1")).await;

    let op = format!("Bearer {OPERATOR}");
    let keys = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/keys"),
            Some(&op),
            None,
        )
        .await;
    let key_id = keys.body[0]["id"].as_str().unwrap().to_owned();
    let revoked = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/keys/{key_id}"),
            Some(&op),
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT, "{}", revoked.body);
    // This instance revoked it: at once.
    t.ticket(&p, &key, solo("duel", "p2"))
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    // The other instance: within a second.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(other_ticket("o2").await, StatusCode::UNAUTHORIZED);
}

/// The router decodes `%70rj_…` to `prj_…` for the handler: a write through
/// such a path is honoured at once like any other.
async fn a_change_through_an_escaped_path_is_seen_at_once(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let escaped = format!("%70{}", &p[1..]);

    disable_duel(
        &t,
        &format!("/v1/projects/{escaped}/game-modes/%64uel"),
        &key,
    )
    .await;
    t.ticket(&p, &key, solo("duel", "p2"))
        .await
        .assert_problem(StatusCode::CONFLICT, "GAME_MODE_DISABLED");

    let op = format!("Bearer {OPERATOR}");
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{escaped}"),
            Some(&op),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    t.ticket(&p, &key, solo("duel", "p3"))
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
}

async fn readiness_names_the_live_store(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let ready = t.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    match pools {
        Pools::Redis => {
            assert_eq!(ready.body["liveStore"], "redis", "{}", ready.body);
            assert_eq!(ready.body["redis"], "ok", "{}", ready.body);
        }
        Pools::Memory => {
            assert_eq!(ready.body["liveStore"], "in-process", "{}", ready.body);
            assert!(ready.body.get("redis").is_none(), "{}", ready.body);
        }
    }
}

/// A block list naming the ticket's own player, or a member of its own
/// party, is refused at each such entry (docs/rules.md, "Attributes"): an
/// `avoid` rule compares candidates, and a party is one.
async fn a_block_list_naming_the_tickets_own_player_or_party_is_refused(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    let mut mode = duel("duel");
    mode["attributes"] = json!({"blocked": {"type": "playerSet", "default": []}});
    mode["rules"] = json!([{"name": "no-blocked", "type": "avoid", "attribute": "blocked"}]);
    t.mode(&p, &key, mode).await;
    let ticket = |player: &str, blocked: serde_json::Value| {
        json!({"gameMode": "duel", "playerId": player,
               "attributes": {"mmr": 1500, "blocked": blocked},
               "party": {"id": "pB", "members": ["b0", "b1"]}})
    };
    let refused = t
        .ticket(&p, &key, ticket("b0", json!(["b1", "z", "b0"])))
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let errors: Vec<(&str, &str)> = refused.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(errors.len(), 2, "{}", refused.body);
    assert_eq!(errors[0].0, "attributes.blocked[0]");
    assert!(errors[0].1.contains("own party"), "{}", refused.body);
    assert_eq!(errors[1].0, "attributes.blocked[2]");
    assert!(errors[1].1.contains("own player"), "{}", refused.body);
    let mut selfie = solo("duel", "selfie");
    selfie["attributes"]["blocked"] = json!(["selfie"]);
    let refused = t.ticket(&p, &key, selfie).await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        refused.body["errors"][0]["field"], "attributes.blocked[0]",
        "{}",
        refused.body
    );
    // Anyone outside the party may be blocked.
    t.ticket_ok(&p, &key, ticket("b0", json!(["z"]))).await;
}
