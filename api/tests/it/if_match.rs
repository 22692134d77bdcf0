//! Conditional writes of game modes: `ETag` is the version, a stale
//! `If-Match` or body `version` is `412 VERSION_MISMATCH` and changes
//! nothing, `PUT` creates an absent mode (config as code), `If-None-Match:
//! *` only creates, and a `DELETE` honours `If-Match`.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};

async fn put(
    t: &TestApp,
    path: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> crate::common::Answer {
    let mut req = Request::builder()
        .method(Method::PUT)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {OPERATOR}"))
        .header(header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    t.send(
        req.body(Body::from(serde_json::to_vec(body).unwrap()))
            .unwrap(),
    )
    .await
}

async fn version_of(t: &TestApp, path: &str) -> (i64, String) {
    let got = t.call(Method::GET, path, Some(OPERATOR), None).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    let etag = got.headers[header::ETAG].to_str().unwrap().to_owned();
    (got.body["version"].as_i64().unwrap(), etag)
}

async fn stale_writes_are_refused(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let path = format!("/v1/projects/{p}/game-modes/duel");

    // PUT creates an absent mode; If-None-Match: * only creates.
    let created = put(&t, &path, &mode("duel"), &[("if-none-match", "*")]).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.headers[header::ETAG], "\"1\"");
    assert!(created.body["webhook"]["secret"]
        .as_str()
        .unwrap()
        .starts_with("whsec_"));
    put(&t, &path, &mode("duel"), &[("if-none-match", "*")])
        .await
        .assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    assert_eq!(version_of(&t, &path).await, (1, "\"1\"".to_owned()));

    // Two writers read version 1; the first wins, the second is refused.
    let mut a = mode("duel");
    a["matchmakingCycleDurationSeconds"] = json!(7);
    let mut b = mode("duel");
    b["matchmakingCycleDurationSeconds"] = json!(9);
    let first = put(&t, &path, &a, &[("if-match", "\"1\"")]).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.headers[header::ETAG], "\"2\"");
    let second = put(&t, &path, &b, &[("if-match", "\"1\"")]).await;
    second.assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    assert!(second.body["detail"]
        .as_str()
        .unwrap()
        .contains("version 2"));

    // The same with the version in the body (a GET's answer sent back).
    let mut stale = b.clone();
    stale["version"] = json!(1);
    put(&t, &path, &stale, &[])
        .await
        .assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    // Weak tags never match, nor does a tag of a version to come.
    for tag in ["W/\"2\"", "\"3\"", "2"] {
        put(&t, &path, &b, &[("if-match", tag)])
            .await
            .assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    }
    // Nothing of the refused writes landed.
    let now = t.call(Method::GET, &path, Some(OPERATOR), None).await;
    assert_eq!(
        now.body["matchmakingCycleDurationSeconds"].as_f64(),
        Some(7.0)
    );
    assert_eq!(version_of(&t, &path).await, (2, "\"2\"".to_owned()));
    let history = t
        .call(
            Method::GET,
            &format!("{path}/versions"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert_eq!(history.body.as_array().unwrap().len(), 2);

    // The current version applies, through the header, `*` or the body.
    let ok = put(&t, &path, &b, &[("if-match", "\"1\", \"2\"")]).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.headers[header::ETAG], "\"3\"");
    let mut fresh = a.clone();
    fresh["version"] = json!(3);
    let ok = put(&t, &path, &fresh, &[]).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["version"], 4);
    let ok = put(&t, &path, &b, &[("if-match", "*")]).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    // Without any precondition, PUT still replaces (last writer wins).
    let ok = put(&t, &path, &a, &[]).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["version"], 6);

    // If-Match on an absent mode creates nothing.
    let other = format!("/v1/projects/{p}/game-modes/other");
    put(&t, &other, &mode("other"), &[("if-match", "*")])
        .await
        .assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    let mut versioned = mode("other");
    versioned["version"] = json!(1);
    put(&t, &other, &versioned, &[])
        .await
        .assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    let absent = t.call(Method::GET, &other, Some(OPERATOR), None).await;
    assert_eq!(absent.status, StatusCode::NOT_FOUND);
    // A PUT-create obeys the same rules as POST: the name must be the path's.
    let renamed = put(&t, &other, &mode("third"), &[]).await;
    renamed.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
}

/// `DELETE` of a mode honours `If-Match`: another version's tag is `412`
/// and the mode stays; its own tag deletes it.
async fn a_delete_honours_if_match(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let path = format!("/v1/projects/{p}/game-modes/duel");
    let created = put(&t, &path, &mode("duel"), &[]).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let delete = |tag: &'static str| {
        let req = Request::builder()
            .method(Method::DELETE)
            .uri(&path)
            .header(header::AUTHORIZATION, format!("Bearer {OPERATOR}"))
            .header("if-match", tag)
            .body(Body::empty())
            .unwrap();
        t.send(req)
    };
    delete("\"2\"")
        .await
        .assert_problem(StatusCode::PRECONDITION_FAILED, "VERSION_MISMATCH");
    assert_eq!(version_of(&t, &path).await.0, 1);
    let deleted = delete("\"1\"").await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    t.call(Method::GET, &path, Some(OPERATOR), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
}

/// Pipelines applying one file at once, without conditions: every `PUT`
/// of the same config answers `200` and the mode moves one version.
async fn identical_puts_at_once_all_succeed(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let path = format!("/v1/projects/{p}/game-modes/duel");
    let created = put(&t, &path, &mode("duel"), &[]).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut changed = mode("duel");
    changed["matchmakingCycleDurationSeconds"] = json!(7);
    let answers = futures::future::join_all((0..8).map(|_| put(&t, &path, &changed, &[]))).await;
    for answer in &answers {
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_eq!(answer.body["version"], 2, "{}", answer.body);
    }
    assert_eq!(version_of(&t, &path).await.0, 2);
}

/// An empty `attributes` block and none are one config: sending one then
/// the other makes no new version.
async fn an_empty_attributes_block_is_no_block(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let path = format!("/v1/projects/{p}/game-modes/duel");
    let mut with_empty = mode("duel");
    with_empty["attributes"] = json!({});
    let created = put(&t, &path, &with_empty, &[]).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    for body in [mode("duel"), with_empty.clone(), mode("duel")] {
        let again = put(&t, &path, &body, &[]).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
        assert_eq!(again.body["version"], 1, "{}", again.body);
    }
}

on_both!(
    stale_writes_are_refused,
    a_delete_honours_if_match,
    identical_puts_at_once_all_succeed,
    an_empty_attributes_block_is_no_block
);
