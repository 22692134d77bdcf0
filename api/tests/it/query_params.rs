//! Query parameters, ranges and bodies answered in plain words: an unknown
//! or repeated parameter is refused by name, a range error says the range
//! and the value sent, a backwards window says which way it must run.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// The `detail` of a 422 `VALIDATION_ERROR` on `field`.
fn refused(a: &crate::common::Answer, field: &str) -> String {
    a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(a.body["errors"][0]["field"], field, "{}", a.body);
    a.body["detail"].as_str().unwrap().to_owned()
}

/// A misspelled parameter is refused before anything is done, on every
/// route reading a query; so is one given twice.
async fn unknown_and_repeated_parameters_are_refused(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    let created = t
        .call(Method::POST, &base, Some(&key), Some(mode("m2")))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let mut changed = mode("m2");
    changed["ticketTtlSeconds"] = json!(900);
    let put = t
        .call(
            Method::PUT,
            &format!("{base}/m2?gaurd=waitP90"),
            Some(&key),
            Some(changed),
        )
        .await;
    let detail = refused(&put, "gaurd");
    assert!(
        detail.contains("`gaurd` query parameter is not known")
            && detail.contains("`guard`, `guardTolerance`"),
        "{detail}"
    );
    let now = t
        .call(Method::GET, &format!("{base}/m2"), Some(&key), None)
        .await;
    assert_eq!(now.body["ticketTtlSeconds"], 600, "{}", now.body);

    for (path, field) in [
        (format!("{base}/m2/deliveries?foo=bar"), "foo"),
        (
            format!("/v1/projects/{p}/matches?limit=5&gamemode=m2"),
            "gamemode",
        ),
        (format!("{base}/m2/stats/history?bucket=60"), "bucket"),
        (
            format!("{base}/m2/recording?since=2026-12-01T00:00:00Z"),
            "since",
        ),
        (format!("{base}/m2/leaderboard?page=2"), "page"),
    ] {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        let detail = refused(&a, field);
        assert!(detail.contains("is not known"), "{path}: {detail}");
    }

    // Routes that read no query at all refuse one too, before acting.
    let list = t
        .call(Method::GET, &format!("{base}?foo=bar"), Some(&key), None)
        .await;
    let detail = refused(&list, "foo");
    assert!(
        detail.contains("this route takes no query parameters"),
        "{detail}"
    );
    let ticket = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets?dryRun=true"),
            Some(&key),
            Some(json!({"gameMode": "m2", "playerId": "p1", "attributes": {"mmr": 1500}})),
        )
        .await;
    refused(&ticket, "dryRun");
    let tickets = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "m2", "playerId": "p1", "attributes": {"mmr": 1500}})),
        )
        .await;
    assert_eq!(tickets.status, StatusCode::CREATED, "{}", tickets.body);

    let twice = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches?limit=1&limit=2"),
            Some(&key),
            None,
        )
        .await;
    let detail = refused(&twice, "limit");
    assert_eq!(
        detail, "the `limit` query parameter is given more than once",
        "{detail}"
    );

    // A name or value of kilobytes is named in a few dozen characters,
    // not repeated whole (an answer of 60 KB to a query of 20 KB before).
    let long = "x".repeat(20_000);
    for path in [
        format!("/v1/projects/{p}/matches?{long}=1"),
        format!("/v1/projects/{p}/matches?limit={long}"),
    ] {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        let size = a.body.to_string().len();
        assert!(size < 1_000, "{size} bytes: {}", a.body);
        assert!(a.body.to_string().contains("xxx…"), "{}", a.body);
    }

    // A probe's or a scraper's own parameters are ignored where nothing
    // reads a query: they must not fail the probe.
    for path in [
        "/healthz?probe=1",
        "/readyz?nocache=17",
        "/metrics?format=text",
    ] {
        let a = t.call(Method::GET, path, None, None).await;
        assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.body);
    }

    // What the console and the SDKs send is still served.
    for path in [
        format!("/v1/projects/{p}/matches?limit=50&gameMode=m2"),
        format!(
            "{base}/m2/stats/history?from=2026-12-01T00%3A00%3A00Z&to=2026-12-01T01%3A00%3A00Z&bucketSeconds=300"
        ),
        format!("{base}/m2/deliveries?limit=10&eventType=match.made"),
    ] {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.body);
    }
}

/// `limit` out of range, not a number, or too large for any number: the
/// same answer naming it, the range, and the value sent.
async fn range_errors_say_the_range_and_the_value(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    t.call(Method::POST, &base, Some(&key), Some(mode("m2")))
        .await;
    for (path, sent) in [
        (format!("/v1/projects/{p}/matches?limit=0"), "0"),
        (format!("/v1/projects/{p}/matches?limit=201"), "201"),
        (
            format!("{base}/m2/deliveries?limit=99999999999999999999"),
            "99999999999999999999",
        ),
        (format!("{base}/m2/deliveries?limit=-1"), "-1"),
    ] {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        assert_eq!(
            refused(&a, "limit"),
            format!(
                "the `limit` query parameter must be a whole number from 1 to 200; got {sent:?}"
            ),
            "{path}"
        );
    }
    let a = t
        .call(
            Method::GET,
            &format!("{base}/m2/stats/history?bucketSeconds=90"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        refused(&a, "bucketSeconds"),
        "the `bucketSeconds` query parameter must be a multiple of 60 from 60 to 86400; got \"90\""
    );
}

/// A window whose `from` is not before its `to` says which way it must run.
async fn backwards_windows_say_from_must_be_before_to(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    t.call(Method::POST, &base, Some(&key), Some(mode("m2")))
        .await;
    for route in ["stats/history", "recording"] {
        let a = t
            .call(
                Method::GET,
                &format!("{base}/m2/{route}?from=2026-12-02T11:00:00Z&to=2026-12-01T00:00:00Z"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(
            refused(&a, "from"),
            // Timestamps in the one form of every answer (docs/openapi.md).
            "`from` must be before `to`; got from 2026-12-02T11:00:00.000Z and to 2026-12-01T00:00:00.000Z",
            "{route}"
        );
    }
}

/// With http webhooks allowed (`matchplane dev`), a refused scheme names
/// both allowed ones.
async fn refused_schemes_name_http_when_it_is_allowed(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut body = mode("m2");
    body["webhook"]["url"] = json!("ftp://127.0.0.1/x");
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
    let text = a.body.to_string();
    assert!(text.contains("must be http or https"), "{text}");
}

/// A body nested deeper than the parser takes says so, and the limit.
async fn too_deep_json_says_so(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/game-modes"),
        Some(&key),
        Some(mode("m2")),
    )
    .await;
    let mut data = json!(1);
    for _ in 0..200 {
        data = Value::Array(vec![data]);
    }
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "m2", "playerId": "p1",
                "attributes": {"mmr": 1500, "data": data}})),
        )
        .await;
    a.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let detail = a.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("nested too deeply") && detail.contains("at most 127"),
        "{detail}"
    );
    assert!(!detail.contains("recursion"), "{detail}");
}

on_both!(
    unknown_and_repeated_parameters_are_refused,
    range_errors_say_the_range_and_the_value,
    backwards_windows_say_from_must_be_before_to,
    refused_schemes_name_http_when_it_is_allowed,
    too_deep_json_says_so,
);
