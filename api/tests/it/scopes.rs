//! Key scopes: every project route of the OpenAPI document is classified
//! here (a route missing from the table fails the test, so a new route must
//! be classified), and an `admin`, a `backend` and a `read` key are sent to
//! each: a key gets `403 FORBIDDEN` naming the scope it lacks outside its
//! scopes, an `admin` key never does; operator-only routes answer all
//! `401`.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Needs {
    /// Any key of the project (`read`, `backend` or `admin`).
    Read,
    /// A `backend` or an `admin` key.
    Backend,
    /// An `admin` key.
    Admin,
    /// The operator only: every key gets 401.
    Operator,
}

/// Every project-scoped route and who may call it.
const TABLE: &[(&str, &str, Needs)] = &[
    ("GET", "/v1/projects/{projectId}", Needs::Read),
    ("PATCH", "/v1/projects/{projectId}", Needs::Operator),
    ("DELETE", "/v1/projects/{projectId}", Needs::Operator),
    ("GET", "/v1/projects/{projectId}/settings", Needs::Read),
    ("PATCH", "/v1/projects/{projectId}/settings", Needs::Admin),
    ("GET", "/v1/projects/{projectId}/webhook", Needs::Read),
    ("PUT", "/v1/projects/{projectId}/webhook", Needs::Admin),
    ("DELETE", "/v1/projects/{projectId}/webhook", Needs::Admin),
    (
        "POST",
        "/v1/projects/{projectId}/webhook/rotate-secret",
        Needs::Admin,
    ),
    ("GET", "/v1/projects/{projectId}/keys", Needs::Read),
    ("POST", "/v1/projects/{projectId}/keys", Needs::Admin),
    (
        "DELETE",
        "/v1/projects/{projectId}/keys/{keyId}",
        Needs::Admin,
    ),
    ("GET", "/v1/projects/{projectId}/game-modes", Needs::Read),
    ("POST", "/v1/projects/{projectId}/game-modes", Needs::Admin),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}",
        Needs::Read,
    ),
    (
        "PUT",
        "/v1/projects/{projectId}/game-modes/{name}",
        Needs::Admin,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/game-modes/{name}",
        Needs::Admin,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/versions",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/stats",
        Needs::Read,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/game-modes/{name}/preview",
        Needs::Read,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/game-modes/{name}/replay",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/recording",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/deliveries",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/leaderboard",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}",
        Needs::Read,
    ),
    (
        "PUT",
        "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/game-modes/{name}/results",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/game-modes/{name}/hold",
        Needs::Backend,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/game-modes/{name}/hold",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/game-modes/{name}/webhook/rotate-secret",
        Needs::Admin,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/game-modes/{name}/webhook/test",
        Needs::Admin,
    ),
    ("GET", "/v1/projects/{projectId}/matches", Needs::Read),
    (
        "GET",
        "/v1/projects/{projectId}/matches/{matchId}",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/matches/{matchId}/deliveries",
        Needs::Read,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/matches/{matchId}/deliveries/redeliver",
        Needs::Admin,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/players/{playerId}/searches",
        Needs::Backend,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/players/{playerId}",
        Needs::Admin,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/parties/{partyId}/searches",
        Needs::Backend,
    ),
    ("POST", "/v1/projects/{projectId}/tickets", Needs::Backend),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/pool",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/game-modes/{name}/stats/history",
        Needs::Read,
    ),
    ("POST", "/v1/projects/{projectId}/simulate", Needs::Read),
    (
        "POST",
        "/v1/projects/{projectId}/tickets/{ticketId}/accept",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/tickets/{ticketId}/decline",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/matches/{matchId}/backfill",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/matches/{matchId}/release",
        Needs::Backend,
    ),
    (
        "POST",
        "/v1/projects/{projectId}/matches/{matchId}/assignment",
        Needs::Backend,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/matches/{matchId}/backfill",
        Needs::Read,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}",
        Needs::Read,
    ),
    (
        "PUT",
        "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}",
        Needs::Backend,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}",
        Needs::Backend,
    ),
    (
        "GET",
        "/v1/projects/{projectId}/tickets/{ticketId}",
        Needs::Read,
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/tickets/{ticketId}",
        Needs::Backend,
    ),
];

fn documented_project_routes() -> BTreeSet<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/openapi.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = BTreeSet::new();
    for (route, item) in doc["paths"].as_object().unwrap() {
        if route.contains("{projectId}") {
            for method in item.as_object().unwrap().keys() {
                out.insert((method.to_uppercase(), route.clone()));
            }
        }
    }
    out
}

#[test]
fn every_documented_project_route_is_classified() {
    let table: BTreeSet<(String, String)> = TABLE
        .iter()
        .map(|(m, r, _)| ((*m).to_owned(), (*r).to_owned()))
        .collect();
    let documented = documented_project_routes();
    let unclassified: Vec<_> = documented.difference(&table).collect();
    assert!(
        unclassified.is_empty(),
        "classify these routes in api/tests/it/scopes.rs (and api/src/scopes.rs): {unclassified:?}"
    );
    let stale: Vec<_> = table.difference(&documented).collect();
    assert!(stale.is_empty(), "no longer documented: {stale:?}");
}

/// Creates a key of `project` with `scopes` as the operator; returns it.
async fn key_with(t: &TestApp, project: &str, scopes: Value) -> String {
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{project}/keys"),
            Some(OPERATOR),
            Some(json!({"name": "k", "scopes": scopes})),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    assert_eq!(a.body["scopes"], scopes, "{}", a.body);
    a.body["key"].as_str().unwrap().to_owned()
}

async fn every_route_answers_by_scope(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let admin = key_with(&t, &p, json!(["admin"])).await;
    let backend_key = key_with(&t, &p, json!(["backend"])).await;
    let read_key = key_with(&t, &p, json!(["read"])).await;
    let mut duel = mode("duel");
    duel["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(OPERATOR),
            Some(duel),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    for (method, route, needs) in TABLE {
        // Absent resources: an allowed call ends in a 404/422 of the handler
        // and changes nothing, so the order of the table does not matter.
        let path = route
            .replace("{projectId}", &p)
            .replace("{name}", "no-such-mode")
            .replace("{keyId}", "key_01J0000000000000000000000")
            .replace("{playerId}", "p1")
            .replace("{ticketId}", "tkt_01J0000000000000000000000")
            .replace("{matchId}", "mat_01J0000000000000000000000");
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let body = matches!(method, Method::POST | Method::PUT | Method::PATCH).then(|| json!({}));
        for (who, key) in [
            ("admin", &admin),
            ("backend", &backend_key),
            ("read", &read_key),
        ] {
            let answer = t.call(method.clone(), &path, Some(key), body.clone()).await;
            let refused = match (needs, who) {
                (Needs::Operator, _) => Some((StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "")),
                (Needs::Admin, "backend" | "read") => {
                    Some((StatusCode::FORBIDDEN, "FORBIDDEN", "`admin`"))
                }
                (Needs::Backend, "read") => Some((StatusCode::FORBIDDEN, "FORBIDDEN", "`backend`")),
                _ => None,
            };
            match refused {
                Some((status, code, scope)) => {
                    answer.assert_problem(status, code);
                    if code == "FORBIDDEN" {
                        let detail = answer.body["detail"].as_str().unwrap();
                        assert!(detail.contains(scope), "{method} {route}: {detail}");
                    }
                }
                None => assert!(
                    ![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&answer.status),
                    "{method} {route} with the {who} key: {} {}",
                    answer.status,
                    answer.body
                ),
            }
        }
    }
    // The 403 comes before the body is read.
    let unreadable = t
        .send(
            axum::http::Request::builder()
                .method(Method::POST)
                .uri(format!("/v1/projects/{p}/game-modes"))
                .header("authorization", format!("Bearer {backend_key}"))
                .header("content-type", "text/plain")
                .body(axum::body::Body::from("{not json"))
                .unwrap(),
        )
        .await;
    unreadable.assert_problem(StatusCode::FORBIDDEN, "FORBIDDEN");
}

async fn keys_default_by_who_creates_them(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let keys = format!("/v1/projects/{p}/keys");
    // The operator's key (a project's first key) is admin.
    let first = t
        .call(
            Method::POST,
            &keys,
            Some(OPERATOR),
            Some(json!({"name": "first"})),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert_eq!(first.body["scopes"], json!(["admin"]));
    let admin = first.body["key"].as_str().unwrap().to_owned();
    // An admin key's key is backend unless it asks for admin.
    let made = t
        .call(
            Method::POST,
            &keys,
            Some(&admin),
            Some(json!({"name": "b"})),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!(made.body["scopes"], json!(["backend"]));
    let backend_key = made.body["key"].as_str().unwrap().to_owned();
    let no_body = t.call(Method::POST, &keys, Some(&admin), None).await;
    assert_eq!(
        no_body.body["scopes"],
        json!(["backend"]),
        "{}",
        no_body.body
    );
    let second_admin = t
        .call(
            Method::POST,
            &keys,
            Some(&admin),
            Some(json!({"name": "a2", "scopes": ["admin"]})),
        )
        .await;
    assert_eq!(
        second_admin.status,
        StatusCode::CREATED,
        "{}",
        second_admin.body
    );
    assert_eq!(second_admin.body["scopes"], json!(["admin"]));
    // A backend key mints nothing, revokes nothing, whatever it asks for.
    for body in [
        None,
        Some(json!({"name": "x"})),
        Some(json!({"scopes": ["backend"]})),
        Some(json!({"scopes": ["admin"]})),
    ] {
        t.call(Method::POST, &keys, Some(&backend_key), body)
            .await
            .assert_problem(StatusCode::FORBIDDEN, "FORBIDDEN");
    }
    let first_id = first.body["id"].as_str().unwrap();
    t.call(
        Method::DELETE,
        &format!("{keys}/{first_id}"),
        Some(&backend_key),
        None,
    )
    .await
    .assert_problem(StatusCode::FORBIDDEN, "FORBIDDEN");
    // An empty list is refused, naming the field.
    let empty = t
        .call(
            Method::POST,
            &keys,
            Some(&admin),
            Some(json!({"scopes": []})),
        )
        .await;
    empty.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(empty.body["errors"][0]["field"], "scopes");
    // An unknown scope is refused, naming the field.
    let unknown = t
        .call(
            Method::POST,
            &keys,
            Some(&admin),
            Some(json!({"scopes": ["root"]})),
        )
        .await;
    assert_eq!(unknown.code(), "VALIDATION_ERROR", "{}", unknown.body);
    assert!(
        unknown.body["errors"][0]["field"]
            .as_str()
            .unwrap()
            .starts_with("scopes"),
        "{}",
        unknown.body
    );
    // The list shows every key's scopes; the backend key may read it.
    let listed = t.call(Method::GET, &keys, Some(&backend_key), None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let scopes: Vec<Value> = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["scopes"].clone())
        .collect();
    assert_eq!(
        scopes,
        [
            json!(["admin"]),
            json!(["backend"]),
            json!(["backend"]),
            json!(["admin"])
        ]
    );
    // A backend key does its job: a ticket.
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/game-modes"),
        Some(&admin),
        Some(mode("duel")),
    )
    .await;
    let ticket = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&backend_key),
            Some(json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}})),
        )
        .await;
    assert_eq!(ticket.status, StatusCode::CREATED, "{}", ticket.body);
}

on_both!(
    every_route_answers_by_scope,
    keys_default_by_who_creates_them
);
