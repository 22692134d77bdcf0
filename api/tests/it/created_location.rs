//! Every `201 Created` names the new resource in `Location` (docs/api-tour.md),
//! on the first answer and on an `Idempotency-Key` replay; the OpenAPI
//! document declares the header on every `201` it lists.

use crate::common::{mode, Answer, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};

/// `answer`'s `Location`, after checking it is a `201`.
fn location(answer: &Answer) -> String {
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
    answer
        .headers
        .get(header::LOCATION)
        .unwrap_or_else(|| panic!("no Location on a 201: {:?}", answer.headers))
        .to_str()
        .unwrap()
        .to_owned()
}

/// `GET location` answers `200` with `field` as `want`.
async fn reads_back(t: &TestApp, location: &str, token: &str, field: &str, want: &Value) {
    let read = t.call(Method::GET, location, Some(token), None).await;
    assert_eq!(read.status, StatusCode::OK, "GET {location}: {}", read.body);
    assert_eq!(&read.body[field], want, "GET {location}: {}", read.body);
}

async fn creates_answer_with_location(backend: Backend) {
    let t = TestApp::new(backend).await;
    // A project (operator).
    let created = t
        .call(
            Method::POST,
            "/v1/projects",
            Some(OPERATOR),
            Some(json!({"name": "Studio", "tier": "pro"})),
        )
        .await;
    let at = location(&created);
    let p = created.body["id"].as_str().unwrap().to_owned();
    assert_eq!(at, format!("/v1/projects/{p}"));
    reads_back(&t, &at, OPERATOR, "id", &json!(p)).await;

    // A key: its address is the one its DELETE revokes.
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/keys"),
            Some(OPERATOR),
            Some(json!({"name": "ci"})),
        )
        .await;
    let at = location(&created);
    let key = created.body["key"].as_str().unwrap().to_owned();
    let key_id = created.body["id"].as_str().unwrap();
    assert_eq!(at, format!("/v1/projects/{p}/keys/{key_id}"));

    // A game mode, by POST and by a PUT that creates it.
    let mut duel = mode("duel");
    duel["matchShape"] = json!([1, 1]);
    duel.as_object_mut().unwrap().remove("parties");
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(duel.clone()),
        )
        .await;
    let at = location(&created);
    assert_eq!(at, format!("/v1/projects/{p}/game-modes/duel"));
    reads_back(&t, &at, &key, "name", &json!("duel")).await;
    duel["name"] = json!("duo");
    let created = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{p}/game-modes/duo"),
            Some(&key),
            Some(duel),
        )
        .await;
    let at = location(&created);
    assert_eq!(at, format!("/v1/projects/{p}/game-modes/duo"));
    assert_eq!(created.headers[header::ETAG], "\"1\"");
    reads_back(&t, &at, &key, "name", &json!("duo")).await;

    // A ticket: its address is its status.
    let ticket = json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(ticket),
        )
        .await;
    let at = location(&created);
    let ticket_id = created.body["ticketId"].clone();
    assert_eq!(
        at,
        format!("/v1/projects/{p}/tickets/{}", ticket_id.as_str().unwrap())
    );
    reads_back(&t, &at, &key, "ticketId", &ticket_id).await;

    // The project's webhook endpoint, by the PUT that creates it.
    let hook = json!({"url": "https://hooks.example.com/matchplane"});
    let created = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{p}/webhook"),
            Some(&key),
            Some(hook),
        )
        .await;
    let at = location(&created);
    assert_eq!(at, format!("/v1/projects/{p}/webhook"));
    reads_back(
        &t,
        &at,
        &key,
        "url",
        &json!("https://hooks.example.com/matchplane"),
    )
    .await;

    // A tier, by the PUT that creates it.
    let mut tier = t
        .call(Method::GET, "/v1/tiers/pro", Some(OPERATOR), None)
        .await
        .body;
    for server_set in ["name", "createdAt", "updatedAt"] {
        tier.as_object_mut().unwrap().remove(server_set);
    }
    let created = t
        .call(Method::PUT, "/v1/tiers/studio", Some(OPERATOR), Some(tier))
        .await;
    let at = location(&created);
    assert_eq!(at, "/v1/tiers/studio");
    reads_back(&t, &at, OPERATOR, "name", &json!("studio")).await;
}

async fn a_replay_keeps_the_location(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut duel = mode("duel");
    duel["matchShape"] = json!([1, 1]);
    duel.as_object_mut().unwrap().remove("parties");
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(duel),
        )
        .await;
    location(&created);
    let send = || {
        let req = Request::builder()
            .method(Method::POST)
            .uri(format!("/v1/projects/{p}/tickets"))
            .header(header::AUTHORIZATION, format!("Bearer {key}"))
            .header(header::CONTENT_TYPE, "application/json")
            .header("idempotency-key", "one-ticket")
            .body(Body::from(
                json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}})
                    .to_string(),
            ))
            .unwrap();
        t.send(req)
    };
    let first = send().await;
    let replayed = send().await;
    assert_eq!(replayed.headers["idempotent-replayed"], "true");
    assert_eq!(replayed.body, first.body);
    assert_eq!(location(&replayed), location(&first));
}

on_both!(creates_answer_with_location, a_replay_keeps_the_location);

/// Every `201` the document lists declares `Location`, so that a route
/// added later without it fails here.
#[test]
fn every_documented_201_declares_location() {
    let doc: Value = serde_json::from_str(include_str!("../../../openapi/openapi.json")).unwrap();
    let mut created = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(answer) = op.get("responses").and_then(|r| r.get("201")) {
                created.push(format!("{method} {path}"));
                assert!(
                    answer["headers"].get("Location").is_some(),
                    "{method} {path}: its 201 declares no Location"
                );
            }
        }
    }
    assert!(created.len() >= 9, "{created:?}");
}
