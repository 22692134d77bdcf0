//! Every project-scoped route of the OpenAPI document, not a hand-kept
//! list: a key of project A on project B's path answers 404 (401 on the
//! operator-only routes, which answer every key so), and B's resources are
//! unchanged. A route added later is covered without touching this test.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

fn documented_project_routes() -> Vec<(Method, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/openapi.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for (route, item) in doc["paths"].as_object().unwrap() {
        if !route.contains("{projectId}") {
            continue;
        }
        for method in item.as_object().unwrap().keys() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            out.push((method, route.clone()));
        }
    }
    assert!(
        out.len() >= 20,
        "only {} project-scoped operations documented",
        out.len()
    );
    out
}

async fn every_documented_project_route_hides_other_tenants(backend: Backend) {
    let t = TestApp::new(backend).await;
    let a = t.project("pro").await;
    let b = t.project("pro").await;
    let (_, key_a) = t.key(&a).await;
    let (key_b, _) = t.key(&b).await;
    let mut duel = mode("duel");
    duel["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{b}/game-modes"),
            Some(OPERATOR),
            Some(duel),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let before = look(&t, &b).await;

    for (method, route) in documented_project_routes() {
        let path = route
            .replace("{projectId}", &b)
            .replace("{name}", "duel")
            .replace("{keyId}", &key_b)
            .replace("{playerId}", "p1")
            .replace("{ticketId}", "tkt_01J0000000000000000000000")
            .replace("{matchId}", "mat_01J0000000000000000000000");
        let body = matches!(method, Method::POST | Method::PUT | Method::PATCH).then(|| json!({}));
        let answer = t.call(method.clone(), &path, Some(&key_a), body).await;
        // No scope is needed only where no key passes at all.
        let (status, code) = match matchplane_api::scopes::required_scope(&method, Some(&route)) {
            None => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            Some(_) => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        };
        assert_eq!(
            answer.status, status,
            "{method} {route} with another project's key: {}",
            answer.body
        );
        assert_eq!(answer.code(), code, "{method} {route}");
    }
    assert_eq!(before, look(&t, &b).await, "project B changed");
}

/// What the operator sees of project `b`.
async fn look(t: &TestApp, b: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    for path in [
        format!("/v1/projects/{b}"),
        format!("/v1/projects/{b}/keys"),
        format!("/v1/projects/{b}/game-modes/duel"),
    ] {
        seen.push(t.call(Method::GET, &path, Some(OPERATOR), None).await.body);
    }
    seen
}

on_both!(every_documented_project_route_hides_other_tenants);
