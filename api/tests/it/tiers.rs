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

on_both!(
    seeded_tiers_are_served_and_editable,
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
