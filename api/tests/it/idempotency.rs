//! `Idempotency-Key` on the creating POSTs: a retry (also two at once) gets
//! the first answer and creates nothing more; another request under the
//! same key is `422 IDEMPOTENCY_KEY_REUSED`; failures are not kept; the
//! stored answer does not hold the secret in the clear; keys live 24 h.

use crate::common::{mode, Answer, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{json, Value};

async fn post(t: &TestApp, path: &str, token: &str, key: &str, body: &Value) -> Answer {
    let req = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header("idempotency-key", key)
        .body(Body::from(serde_json::to_vec(body).unwrap()))
        .unwrap();
    t.send(req).await
}

fn ticket(player: &str) -> Value {
    json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": 1500}})
}

async fn setup(backend: Backend) -> (TestApp, String, String) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut duel = mode("duel");
    duel["matchShape"] = json!([1, 1]);
    duel.as_object_mut().unwrap().remove("parties");
    duel["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(duel),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    (t, p, key)
}

async fn retries_get_the_first_ticket(backend: Backend) {
    let (t, p, key) = setup(backend).await;
    let tickets = format!("/v1/projects/{p}/tickets");
    // Two at once: one ticket, the same answer twice.
    let ana = ticket("ana");
    let (a, b) = tokio::join!(
        post(&t, &tickets, &key, "retry-1", &ana),
        post(&t, &tickets, &key, "retry-1", &ana),
    );
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    assert_eq!(b.status, StatusCode::CREATED, "{}", b.body);
    assert_eq!(a.body, b.body);
    let token = a.body["token"].as_str().unwrap().to_owned();
    let ticket_id = a.body["ticketId"].as_str().unwrap().to_owned();
    // Later retries too, marked as replays.
    let c = post(&t, &tickets, &key, "retry-1", &ticket("ana")).await;
    assert_eq!(c.status, StatusCode::CREATED);
    assert_eq!(c.body, a.body);
    assert_eq!(c.headers["idempotent-replayed"], "true");
    // One ticket was made: both answers name it, it is readable, and one
    // key was reserved. (Without the header, the two requests make two
    // tickets with two ids and tokens: see below.)
    let status = t
        .call(
            Method::GET,
            &format!("{tickets}/{ticket_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    // The replayed token is the ticket's: the game client can use it.
    let search = t
        .send(
            Request::builder()
                .uri(format!("/v1/searches/{ticket_id}"))
                .header(
                    header::AUTHORIZATION,
                    format!("Ticket {}", c.body["token"].as_str().unwrap()),
                )
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(search.status, StatusCode::OK, "{}", search.body);
    // The token is nowhere in the clear in the database.
    let rows =
        t.db.query_all(Statement::from_string(
            t.db.get_database_backend(),
            "SELECT key, request_digest, seed, body FROM idempotency_keys",
        ))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    for row in rows {
        for column in ["key", "request_digest", "seed", "body"] {
            let value: String = row.try_get("", column).unwrap();
            assert!(!value.contains(&token), "{column} holds the token");
        }
    }
    // The same key with another body, or from another credential: refused.
    post(&t, &tickets, &key, "retry-1", &ticket("bob"))
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "IDEMPOTENCY_KEY_REUSED");
    let (_, other_key) = t.key(&p).await;
    post(&t, &tickets, &other_key, "retry-1", &ticket("ana"))
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "IDEMPOTENCY_KEY_REUSED");
    // Without the header nothing changes: a second request is a second ticket.
    let cyd = ticket("cyd");
    let (one, two) = tokio::join!(
        t.call(Method::POST, &tickets, Some(&key), Some(cyd.clone())),
        t.call(Method::POST, &tickets, Some(&key), Some(cyd.clone())),
    );
    assert_eq!(one.status, StatusCode::CREATED);
    assert_eq!(two.status, StatusCode::CREATED);
    assert_ne!(one.body["ticketId"], two.body["ticketId"]);
    // A malformed key is named.
    let bad = post(&t, &tickets, &key, "has space", &ticket("dee")).await;
    bad.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(bad.body["errors"][0]["field"], "Idempotency-Key");
}

async fn failures_are_not_kept(backend: Backend) {
    let (t, p, key) = setup(backend).await;
    let tickets = format!("/v1/projects/{p}/tickets");
    let wrong = json!({"gameMode": "nope", "playerId": "ana", "attributes": {"mmr": 1500}});
    let first = post(&t, &tickets, &key, "k", &wrong).await;
    assert_eq!(first.status, StatusCode::NOT_FOUND, "{}", first.body);
    // The key was released: a corrected request under it runs.
    let fixed = post(&t, &tickets, &key, "k", &ticket("ana")).await;
    assert_eq!(fixed.status, StatusCode::CREATED, "{}", fixed.body);
}

async fn a_result_is_reported_once_and_replayed(backend: Backend) {
    let (t, p, key) = setup(backend).await;
    // A match of the mode, as the worker stores it.
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let teams = json!([{ "index": 0, "players": [{ "playerId": "ana", "ticketId": "tkt_a",
        "partyId": null, "mmr": 1500.0, "pingMs": null, "waitSeconds": 4.0 }], "meanMmr": 1500.0 },
        { "index": 1, "players": [{ "playerId": "bob", "ticketId": "tkt_b",
        "partyId": null, "mmr": 1510.0, "pingMs": null, "waitSeconds": 8.0 }], "meanMmr": 1510.0 }]);
    matchplane_store::repos::matches::insert_if_absent(
        &t.db,
        vec![matchplane_store::entities::match_::Model {
            id: match_id.clone(),
            project_id: p.clone(),
            game_mode: "duel".into(),
            game_mode_version: 1,
            teams,
            quality: json!({ "mmrSpread": 10.0, "teamImbalance": 10.0 }),
            created_at: chrono::Utc::now(),
            match_shape: None,
            seats_open: None,
            region: None,
            status: "made".into(),
            answers: None,
            made_at: None,
            assignment: None,
            attributes: None,
        }],
    )
    .await
    .unwrap();
    let results = format!("/v1/projects/{p}/game-modes/duel/results");
    let report = json!({"matchId": match_id,
        "teams": [{"players": ["ana"], "place": 1}, {"players": ["bob"], "place": 2}]});
    // Two at once: rated once, the same answer twice.
    let (a, b) = tokio::join!(
        post(&t, &results, &key, "res-1", &report),
        post(&t, &results, &key, "res-1", &report),
    );
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(b.status, StatusCode::OK, "{}", b.body);
    assert_eq!(a.body, b.body);
    let c = post(&t, &results, &key, "res-1", &report).await;
    assert_eq!(c.status, StatusCode::OK);
    assert_eq!(c.body, a.body);
    // The same key and body on another mode's path is another request,
    // not a replay of this one.
    let elsewhere = format!("/v1/projects/{p}/game-modes/duel-b/results");
    post(&t, &elsewhere, &key, "res-1", &report)
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "IDEMPOTENCY_KEY_REUSED");
    let rating = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/ratings/ana"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rating.body["games"], 1, "{}", rating.body);
    // Without the key, the report is spent.
    t.call(Method::POST, &results, Some(&key), Some(report))
        .await
        .assert_problem(StatusCode::CONFLICT, "RESULT_ALREADY_REPORTED");
}

async fn keys_live_24_hours(backend: Backend) {
    let (t, p, _) = setup(backend).await;
    let keys = format!("/v1/projects/{p}/keys");
    let first = post(&t, &keys, OPERATOR, "mk-1", &json!({"name": "ci"})).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let replay = post(&t, &keys, OPERATOR, "mk-1", &json!({"name": "ci"})).await;
    assert_eq!(
        replay.body, first.body,
        "the same key, shown again to its creator"
    );
    let listed = t.call(Method::GET, &keys, Some(OPERATOR), None).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 2, "{}", listed.body);
    // 25 hours later the key is forgotten: the same header creates anew.
    let past = chrono::Utc::now() - chrono::Duration::hours(25);
    let backend = t.db.get_database_backend();
    t.db.execute(Statement::from_sql_and_values(
        backend,
        match backend {
            sea_orm::DatabaseBackend::Postgres => "UPDATE idempotency_keys SET created_at = $1",
            _ => "UPDATE idempotency_keys SET created_at = ?",
        },
        [past.into()],
    ))
    .await
    .unwrap();
    let later = post(&t, &keys, OPERATOR, "mk-1", &json!({"name": "ci"})).await;
    assert_eq!(later.status, StatusCode::CREATED);
    assert_ne!(later.body["id"], first.body["id"]);
    // Pruning drops what is older than 24 h.
    t.db.execute(Statement::from_sql_and_values(
        backend,
        match backend {
            sea_orm::DatabaseBackend::Postgres => "UPDATE idempotency_keys SET created_at = $1",
            _ => "UPDATE idempotency_keys SET created_at = ?",
        },
        [past.into()],
    ))
    .await
    .unwrap();
    let pruned = matchplane_store::repos::idempotency::prune(
        &t.db,
        chrono::Utc::now() - chrono::Duration::hours(24),
    )
    .await
    .unwrap();
    assert_eq!(pruned, 1);
}

/// `POST /v1/projects` honours the header too, in the operator's own key
/// space (there is no project yet): a retry gets the same project, and a
/// project's keys never meet it.
async fn a_project_is_created_once(backend: Backend) {
    let t = TestApp::new(backend).await;
    let count = || async {
        let all = t
            .call(Method::GET, "/v1/projects", Some(OPERATOR), None)
            .await;
        all.body.as_array().unwrap().len()
    };
    let studio = json!({"name": "Studio", "tier": "pro"});
    let (a, b) = tokio::join!(
        post(&t, "/v1/projects", OPERATOR, "abc1", &studio),
        post(&t, "/v1/projects", OPERATOR, "abc1", &studio),
    );
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    assert_eq!(b.status, StatusCode::CREATED, "{}", b.body);
    assert_eq!(a.body, b.body);
    let c = post(&t, "/v1/projects", OPERATOR, "abc1", &studio).await;
    assert_eq!(c.status, StatusCode::CREATED);
    assert_eq!(c.body, a.body);
    assert_eq!(c.headers["idempotent-replayed"], "true");
    assert_eq!(count().await, 1);
    post(
        &t,
        "/v1/projects",
        OPERATOR,
        "abc1",
        &json!({"name": "Other"}),
    )
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "IDEMPOTENCY_KEY_REUSED");
    // The same header on the new project's routes is another key space.
    let p = a.body["id"].as_str().unwrap();
    let keys = format!("/v1/projects/{p}/keys");
    let made = post(&t, &keys, OPERATOR, "abc1", &json!({"name": "ci"})).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    // A key is refused as without the header, and holds no operator key.
    let key = made.body["key"].as_str().unwrap();
    post(&t, "/v1/projects", key, "abc1", &studio)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    post(&t, "/v1/projects", key, "abc2", &studio)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    assert_eq!(count().await, 1);
}

on_both!(
    a_project_is_created_once,
    retries_get_the_first_ticket,
    failures_are_not_kept,
    a_result_is_reported_once_and_replayed,
    keys_live_24_hours
);
