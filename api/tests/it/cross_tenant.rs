//! A key of project A on any of project B's paths answers 404, exactly as
//! an absent project would, and changes nothing of B; on an operator-only
//! route it answers 401, as it does on its own project (docs/api-keys.md).

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

async fn snapshot(t: &TestApp, b: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [
        format!("/v1/projects/{b}"),
        format!("/v1/projects/{b}/keys"),
        format!("/v1/projects/{b}/game-modes"),
        format!("/v1/projects/{b}/game-modes/duel/versions"),
    ] {
        let a = t.call(Method::GET, &path, Some(OPERATOR), None).await;
        assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.body);
        out.push(a.body);
    }
    out
}

async fn other_tenants_paths_answer_404(backend: Backend) {
    let t = TestApp::new(backend).await;
    let a = t.project("pro").await;
    let b = t.project("pro").await;
    let (_, key_a) = t.key(&a).await;
    let (key_b_id, _) = t.key(&b).await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{b}/game-modes"),
            Some(OPERATOR),
            Some(mode("duel")),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let before = snapshot(&t, &b).await;

    let mut changed = mode("duel");
    changed["matchmakingCycleDurationSeconds"] = json!(10);
    let routes: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, format!("/v1/projects/{b}"), None),
        (
            Method::PATCH,
            format!("/v1/projects/{b}"),
            Some(json!({"tier": "enterprise"})),
        ),
        (Method::DELETE, format!("/v1/projects/{b}"), None),
        (
            Method::POST,
            format!("/v1/projects/{b}/keys"),
            Some(json!({"name": "x"})),
        ),
        (Method::GET, format!("/v1/projects/{b}/keys"), None),
        (
            Method::DELETE,
            format!("/v1/projects/{b}/keys/{key_b_id}"),
            None,
        ),
        (
            Method::POST,
            format!("/v1/projects/{b}/game-modes"),
            Some(mode("other")),
        ),
        (Method::GET, format!("/v1/projects/{b}/game-modes"), None),
        (
            Method::GET,
            format!("/v1/projects/{b}/game-modes/duel"),
            None,
        ),
        (
            Method::PUT,
            format!("/v1/projects/{b}/game-modes/duel"),
            Some(changed),
        ),
        (
            Method::DELETE,
            format!("/v1/projects/{b}/game-modes/duel"),
            None,
        ),
        (
            Method::GET,
            format!("/v1/projects/{b}/game-modes/duel/versions"),
            None,
        ),
        (
            Method::POST,
            format!("/v1/projects/{b}/game-modes/duel/webhook/rotate-secret"),
            None,
        ),
    ];
    let absent = "prj_01ABSENTABSENTABSENTABSENT";
    for (method, path, body) in routes {
        let answer = t
            .call(method.clone(), &path, Some(&key_a), body.clone())
            .await;
        let operator_only = path == format!("/v1/projects/{b}") && method != Method::GET;
        if operator_only {
            answer.assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        } else {
            answer.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
        }
        // Indistinguishable from a project that does not exist.
        let absent_path = path.replace(&b, absent);
        let missing = t
            .call(method.clone(), &absent_path, Some(&key_a), body)
            .await;
        assert_eq!(missing.status, answer.status, "{method} {absent_path}");
        assert_eq!(missing.body, answer.body, "{method} {absent_path}");
    }
    // The 404 comes before the body is even read.
    let unreadable = t
        .send(
            axum::http::Request::builder()
                .method(Method::POST)
                .uri(format!("/v1/projects/{b}/game-modes"))
                .header("authorization", format!("Bearer {key_a}"))
                .header("content-type", "text/plain")
                .body(axum::body::Body::from("{not json"))
                .unwrap(),
        )
        .await;
    unreadable.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    assert_eq!(snapshot(&t, &b).await, before, "project B changed");
    // The webhook secret did not rotate: B's mode is still version 1 with its secret.
    let row = matchplane_store::repos::game_modes::get(&t.db, &b, "duel")
        .await
        .unwrap();
    assert_eq!(row.version, 1);
    assert!(row.previous_webhook_secret.is_none());
    assert_eq!(
        row.webhook_secret,
        created.body["webhook"]["secret"].as_str().unwrap()
    );
}

/// Operator-only routes answer every key `401` before its project is
/// compared with the path's: a key of project A gets the same answer on
/// B, on an absent project and on A (docs/api-keys.md).
async fn operator_routes_answer_every_key_401(backend: Backend) {
    let t = TestApp::new(backend).await;
    let a = t.project("pro").await;
    let b = t.project("pro").await;
    let (_, key_a) = t.key(&a).await;
    let absent = "prj_01ABSENTABSENTABSENTABSENT";
    for (method, body) in [
        (Method::PATCH, Some(json!({"tier": "enterprise"}))),
        (Method::DELETE, None),
    ] {
        let mut answers = Vec::new();
        for project in [&a, &b, absent] {
            let path = format!("/v1/projects/{project}");
            let answer = t
                .call(method.clone(), &path, Some(&key_a), body.clone())
                .await;
            answer.assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
            answers.push(answer.body);
        }
        assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    }
    let kept = t
        .call(
            Method::GET,
            &format!("/v1/projects/{b}"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    assert_eq!(kept.body["tier"], "pro");
}

on_both!(
    other_tenants_paths_answer_404,
    operator_routes_answer_every_key_401
);
