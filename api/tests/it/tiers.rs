//! Tiers: seeded by the migration, read and changed by the operator.

use crate::common::{Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::json;

async fn seeded_tiers_are_served_and_editable(backend: Backend) {
    let t = TestApp::new(backend).await;
    let all = t.call(Method::GET, "/v1/tiers", Some(OPERATOR), None).await;
    assert_eq!(all.status, StatusCode::OK);
    let names: Vec<&str> = all
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["free", "pro", "enterprise"]);
    let free = t
        .call(Method::GET, "/v1/tiers/free", Some(OPERATOR), None)
        .await;
    assert_eq!(free.body["minCycleDurationSeconds"], 5.0);
    assert_eq!(free.body["maxGameModes"], 3);
    assert_eq!(free.body["requestsPerSecond"], 50);
    let enterprise = t
        .call(Method::GET, "/v1/tiers/enterprise", Some(OPERATOR), None)
        .await;
    assert_eq!(enterprise.body["minCycleDurationSeconds"], 0.1);
    assert_eq!(enterprise.body["maxConcurrentSearches"], 10_000_000);

    let mut body = free.body.clone();
    body.as_object_mut().unwrap().remove("updatedAt");
    body["maxGameModes"] = json!(5);
    let put = t
        .call(Method::PUT, "/v1/tiers/free", Some(OPERATOR), Some(body))
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    assert_eq!(put.body["maxGameModes"], 5);

    t.call(Method::GET, "/v1/tiers/gold", Some(OPERATOR), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    t.call(Method::PUT, "/v1/tiers/bad", Some(OPERATOR), Some(json!({
        "minCycleDurationSeconds": -1, "minBaseTolerance": 5, "minExpansionMultiplier": 1,
        "maxMatchSize": 1, "maxGameModes": 3, "maxConcurrentSearches": 10, "requestsPerSecond": 0
    })))
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    // Floors above what any mode may have would leave no valid mode.
    let impossible = t
        .call(Method::PUT, "/v1/tiers/impossible", Some(OPERATOR), Some(json!({
            "minCycleDurationSeconds": 100000, "minBaseTolerance": 500, "minExpansionMultiplier": 1000,
            "maxMatchSize": 64, "maxGameModes": 3, "maxConcurrentSearches": 10, "requestsPerSecond": 10
        })))
        .await;
    impossible.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let fields: Vec<&str> = impossible.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "minCycleDurationSeconds",
            "minBaseTolerance",
            "minExpansionMultiplier"
        ],
        "{}",
        impossible.body
    );
    // Counts past the database's 64-bit integer are refused, never clamped.
    let huge = t
        .call(
            Method::PUT,
            "/v1/tiers/huge",
            Some(OPERATOR),
            Some(json!({
                "minCycleDurationSeconds": 1, "minBaseTolerance": 1, "minExpansionMultiplier": 1,
                "maxMatchSize": 64, "maxGameModes": 50, "requestsPerSecond": 2000,
                "maxConcurrentSearches": 9_223_372_036_854_775_808_u64,
                "maxPendingTickets": 18_446_744_073_709_551_615_u64
            })),
        )
        .await;
    huge.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let fields: Vec<&str> = huge.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["maxConcurrentSearches", "maxPendingTickets"]);
    t.call(Method::GET, "/v1/tiers/huge", Some(OPERATOR), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    t.call(Method::GET, "/v1/tiers", None, None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
}

async fn projects_crud(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    assert!(p.starts_with("prj_"));
    let listed = t
        .call(Method::GET, "/v1/projects", Some(OPERATOR), None)
        .await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    let renamed = t
        .call(
            Method::PATCH,
            &format!("/v1/projects/{p}"),
            Some(OPERATOR),
            Some(json!({"name": "Renamed"})),
        )
        .await;
    assert_eq!(renamed.body["name"], "Renamed");
    assert_eq!(renamed.body["tier"], "pro");
    let (_, key) = t.key(&p).await;
    let own = t
        .call(Method::GET, &format!("/v1/projects/{p}"), Some(&key), None)
        .await;
    assert_eq!(own.status, StatusCode::OK);
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    t.call(
        Method::GET,
        &format!("/v1/projects/{p}"),
        Some(OPERATOR),
        None,
    )
    .await
    .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    // Its keys died with it.
    t.call(Method::GET, &format!("/v1/projects/{p}"), Some(&key), None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
}

/// A tier's limits, as a `PUT` takes them.
fn limits() -> serde_json::Value {
    json!({
        "minCycleDurationSeconds": 1, "minBaseTolerance": 1, "minExpansionMultiplier": 1,
        "maxMatchSize": 64, "maxGameModes": 10, "maxConcurrentSearches": 1000,
        "requestsPerSecond": 100
    })
}

/// A `PUT` that creates a tier answers `201` with `Location`, one that
/// replaces it `200`, as a game mode's `PUT` does (docs/api-tour.md).
async fn a_put_says_whether_it_created_the_tier(backend: Backend) {
    let t = TestApp::new(backend).await;
    let created = t
        .call(
            Method::PUT,
            "/v1/tiers/gold",
            Some(OPERATOR),
            Some(limits()),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.headers[header::LOCATION], "/v1/tiers/gold");
    assert_eq!(created.body["name"], "gold");
    let mut changed = limits();
    changed["maxGameModes"] = json!(20);
    let replaced = t
        .call(Method::PUT, "/v1/tiers/gold", Some(OPERATOR), Some(changed))
        .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    assert!(replaced.headers.get(header::LOCATION).is_none());
    assert_eq!(replaced.body["maxGameModes"], 20);
    // A seeded tier is replaced.
    let mut free = t
        .call(Method::GET, "/v1/tiers/free", Some(OPERATOR), None)
        .await
        .body;
    free.as_object_mut().unwrap().remove("updatedAt");
    let again = t
        .call(Method::PUT, "/v1/tiers/free", Some(OPERATOR), Some(free))
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
}

/// `DELETE /v1/tiers/{tier}`: `204` for a tier no project is on, `404` for
/// an unknown one, `409 CONFLICT` while projects are on it (how many)
/// and always for `free`, the default tier of a new project.
async fn a_tier_is_deleted_only_when_no_project_needs_it(backend: Backend) {
    let t = TestApp::new(backend).await;
    let put = t
        .call(
            Method::PUT,
            "/v1/tiers/gold",
            Some(OPERATOR),
            Some(limits()),
        )
        .await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let one = t.project("gold").await;
    let two = t.project("gold").await;

    let refused = t
        .call(Method::DELETE, "/v1/tiers/gold", Some(OPERATOR), None)
        .await;
    refused.assert_problem(StatusCode::CONFLICT, "CONFLICT");
    let detail = refused.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("2 projects are on the tier gold"),
        "{detail}"
    );
    let moved = t
        .call(
            Method::PATCH,
            &format!("/v1/projects/{one}"),
            Some(OPERATOR),
            Some(json!({"tier": "pro"})),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    let refused = t
        .call(Method::DELETE, "/v1/tiers/gold", Some(OPERATOR), None)
        .await;
    refused.assert_problem(StatusCode::CONFLICT, "CONFLICT");
    let detail = refused.body["detail"].as_str().unwrap();
    assert!(detail.contains("1 project is on the tier gold"), "{detail}");
    // A deleted project no longer holds it.
    let gone = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{two}"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);

    let deleted = t
        .call(Method::DELETE, "/v1/tiers/gold", Some(OPERATOR), None)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    assert!(deleted.body.is_null());
    t.call(Method::GET, "/v1/tiers/gold", Some(OPERATOR), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let unknown = t
        .call(Method::DELETE, "/v1/tiers/gold", Some(OPERATOR), None)
        .await;
    unknown.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    assert_eq!(unknown.body["detail"], "there is no tier named gold");
    // No project can be put on it any more.
    let a = t
        .call(
            Method::POST,
            "/v1/projects",
            Some(OPERATOR),
            Some(json!({"name": "Late", "tier": "gold"})),
        )
        .await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.body);

    // `free` is what a project created without a tier gets: never deleted,
    // even with no project on it.
    let refused = t
        .call(Method::DELETE, "/v1/tiers/free", Some(OPERATOR), None)
        .await;
    refused.assert_problem(StatusCode::CONFLICT, "CONFLICT");
    let detail = refused.body["detail"].as_str().unwrap();
    assert!(detail.contains("default tier"), "{detail}");
    let free = t
        .call(Method::GET, "/v1/tiers/free", Some(OPERATOR), None)
        .await;
    assert_eq!(free.status, StatusCode::OK);

    // A seeded tier no project is on goes like any other.
    let deleted = t
        .call(Method::DELETE, "/v1/tiers/enterprise", Some(OPERATOR), None)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
}

on_both!(
    seeded_tiers_are_served_and_editable,
    a_put_says_whether_it_created_the_tier,
    a_tier_is_deleted_only_when_no_project_needs_it,
    projects_crud,
    operator_routes_refuse_a_key_before_reading_the_body
);

/// A key on an operator route gets 401 whatever its body: a malformed body
/// must not answer 400 and show how the body is validated first.
async fn operator_routes_refuse_a_key_before_reading_the_body(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let project_path = format!("/v1/projects/{p}");
    for (method, path) in [
        (Method::PUT, "/v1/tiers/free"),
        (Method::DELETE, "/v1/tiers/pro"),
        (Method::POST, "/v1/projects"),
        (Method::PATCH, project_path.as_str()),
    ] {
        for body in ["{not json", "[]", "{}"] {
            let req = Request::builder()
                .method(method.clone())
                .uri(path)
                .header(header::AUTHORIZATION, format!("Bearer {key}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body))
                .unwrap();
            t.send(req)
                .await
                .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        }
    }
}
