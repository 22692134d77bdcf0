//! Webhook URL safety at configuration (SPEC 3, `INVALID_WEBHOOK_URL`).

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::json;

async fn private_webhooks_are_refused(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    for url in [
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://100.64.0.1/hook",
        "https://localhost/hook",
        "http://93.184.216.34/hook",
        "http://game.example.com/hook",
    ] {
        let mut body = mode("hooked");
        body["webhook"]["url"] = json!(url);
        let a = t.call(Method::POST, &base, Some(&key), Some(body)).await;
        a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
        assert_eq!(a.body["errors"][0]["field"], "webhook.url", "{url}");
    }
    let mut public = mode("hooked");
    public["webhook"]["url"] = json!("https://93.184.216.34/hook");
    let created = t.call(Method::POST, &base, Some(&key), Some(public)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    // The same check guards a replace.
    let mut private = mode("hooked");
    private["webhook"]["url"] = json!("https://192.168.0.10/hook");
    t.call(
        Method::PUT,
        &format!("{base}/hooked"),
        Some(&key),
        Some(private),
    )
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
}

async fn operator_can_allow_private_webhooks(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let mut body = mode("local");
    body["webhook"]["url"] = json!("http://127.0.0.1:9000/hook");
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
}

/// A name that does not resolve (NXDOMAIN, no network) is accepted at
/// configuration: its deliveries are checked, and fail, until it resolves.
async fn names_that_do_not_resolve_are_accepted(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    for (name, url) in [
        // README's own example, whatever this machine's DNS says of it.
        ("readme", "https://game.example.com/hooks/match"),
        // `.invalid` never resolves (RFC 6761).
        ("nxdomain", "https://hooks.nowhere.invalid/match?token=1"),
    ] {
        let mut body = mode(name);
        body["webhook"]["url"] = json!(url);
        let created = t.call(Method::POST, &base, Some(&key), Some(body)).await;
        assert_eq!(created.status, StatusCode::CREATED, "{url}: {}", created.body);
        assert_eq!(created.body["webhook"]["url"], url);
    }
}

on_both!(
    private_webhooks_are_refused,
    names_that_do_not_resolve_are_accepted,
    operator_can_allow_private_webhooks
);
