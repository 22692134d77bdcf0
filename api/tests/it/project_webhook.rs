//! A project's webhook endpoint (docs/webhooks.md, "One endpoint for every
//! mode of a project") on PostgreSQL and SQLite: set (secret shown once),
//! read (masked), changed (secret kept), rotated (new secret shown),
//! deleted; the 422s of its body and of a mode's `useProjectEndpoint`;
//! a mode with its own URL keeps its JSON as it was.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

on_both!(
    the_endpoint_is_set_read_rotated_and_deleted,
    bad_endpoints_and_modes_are_422_naming_the_field,
    the_get_answer_is_taken_back_as_the_put_body,
);

fn fields(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap_or_default().to_owned(),
                e["code"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

async fn the_endpoint_is_set_read_rotated_and_deleted(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let path = format!("/v1/projects/{p}/webhook");
    let absent = t.call(Method::GET, &path, Some(&key), None).await;
    absent.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");

    let url = "https://93.184.216.34/hooks/all";
    let created = t
        .call(
            Method::PUT,
            &path,
            Some(&key),
            Some(json!({"url": url, "eventTypes": ["match.made"]})),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let secret = created.body["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() > 20,
        "{secret}"
    );
    assert_eq!(created.body["enabled"], true);
    assert_eq!(created.body["eventTypes"], json!(["match.made"]));
    assert_eq!(created.body["status"]["failing"], false);

    let read = t.call(Method::GET, &path, Some(&key), None).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["secret"], "whsec_********");
    assert_eq!(read.body["url"], url);

    // A change keeps the secret; no eventTypes means every type, each
    // listed.
    let changed = t
        .call(
            Method::PUT,
            &path,
            Some(&key),
            Some(json!({"url": url, "enabled": false})),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert_eq!(changed.body["secret"], "whsec_********");
    assert_eq!(changed.body["enabled"], false);
    assert_eq!(
        changed.body["eventTypes"],
        json!(["match.made", "match.backfilled", "webhook.test"])
    );

    let rotated = t
        .call(
            Method::POST,
            &format!("{path}/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let new = rotated.body["secret"].as_str().unwrap();
    assert!(new.starts_with("whsec_") && new != secret, "{new}");

    // Modes on the endpoint: no URL of their own, their JSON as sent.
    let mut on_project = mode("duel");
    on_project["webhook"] = json!({"useProjectEndpoint": true});
    let made = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(on_project),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!(made.body["webhook"]["useProjectEndpoint"], true);
    assert!(made.body["webhook"].get("url").is_none(), "{}", made.body);
    // A mode with its own URL answers exactly the fields it had before.
    let own = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(mode("solo")),
        )
        .await;
    assert_eq!(own.status, StatusCode::CREATED, "{}", own.body);
    let mut keys: Vec<&str> = own.body["webhook"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["enabled", "secret", "url"]);

    let deleted = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    let gone = t.call(Method::GET, &path, Some(&key), None).await;
    gone.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let again = t.call(Method::DELETE, &path, Some(&key), None).await;
    again.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let rotate_none = t
        .call(
            Method::POST,
            &format!("{path}/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    rotate_none.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
}

async fn bad_endpoints_and_modes_are_422_naming_the_field(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let path = format!("/v1/projects/{p}/webhook");
    let put = |body: Value| {
        let (t, path, key) = (&t, &path, &key);
        async move { t.call(Method::PUT, path, Some(key), Some(body)).await }
    };

    let unknown = put(json!({"url": "https://93.184.216.34/h",
        "eventTypes": ["match.made", "match.exploded"]}))
    .await;
    unknown.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        fields(&unknown.body),
        [("eventTypes[1]".to_owned(), "VALIDATION_ERROR".to_owned())]
    );
    // A type listed twice, and a list of none (nothing would ever be
    // sent while the endpoint says it is on).
    let twice = put(json!({"url": "https://93.184.216.34/h",
        "eventTypes": ["match.made", "webhook.test", "match.made"]}))
    .await;
    assert_eq!(
        fields(&twice.body),
        [("eventTypes[2]".to_owned(), "VALIDATION_ERROR".to_owned())]
    );
    let none = put(json!({"url": "https://93.184.216.34/h", "eventTypes": []})).await;
    assert_eq!(
        fields(&none.body),
        [("eventTypes".to_owned(), "VALIDATION_ERROR".to_owned())]
    );
    // Loopback is refused as a mode's URL is (no private webhooks here).
    let private = put(json!({"url": "http://127.0.0.1:9000/h"})).await;
    assert_eq!(private.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        fields(&private.body),
        [("url".to_owned(), "INVALID_WEBHOOK_URL".to_owned())]
    );
    let empty = put(json!({"url": ""})).await;
    assert_eq!(
        fields(&empty.body),
        [("url".to_owned(), "INVALID_WEBHOOK_URL".to_owned())]
    );
    // A field that may be left out is not sent as null (the document says
    // neither is nullable): a 400 naming it.
    for field in ["eventTypes", "enabled"] {
        let mut body = json!({"url": "https://93.184.216.34/h"});
        body[field] = Value::Null;
        let null = put(body).await;
        null.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        assert_eq!(fields(&null.body)[0].0, field, "{}", null.body);
    }
    // A missing field is a 400 naming it, as on every body.
    let missing = put(json!({"enabled": true})).await;
    missing.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert!(
        fields(&missing.body).iter().any(|(f, _)| f == "url"),
        "{}",
        missing.body
    );
    // Nothing was stored.
    let absent = t.call(Method::GET, &path, Some(&key), None).await;
    absent.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");

    let modes = format!("/v1/projects/{p}/game-modes");
    let mut both = mode("both");
    both["webhook"] = json!({"url": "https://93.184.216.34/h", "useProjectEndpoint": true});
    let refused = t.call(Method::POST, &modes, Some(&key), Some(both)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(
        fields(&refused.body),
        [("webhook.url".to_owned(), "VALIDATION_ERROR".to_owned())]
    );
    let mut neither = mode("neither");
    neither["webhook"] = json!({"enabled": true});
    let refused = t
        .call(Method::POST, &modes, Some(&key), Some(neither))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(
        fields(&refused.body),
        [("webhook.url".to_owned(), "INVALID_WEBHOOK_URL".to_owned())]
    );
    let mut typo = mode("typo");
    typo["webhook"] = json!({"useProjectEndpoint": "yes"});
    let refused = t.call(Method::POST, &modes, Some(&key), Some(typo)).await;
    assert!(
        fields(&refused.body)
            .iter()
            .any(|(f, _)| f == "webhook.useProjectEndpoint"),
        "{}",
        refused.body
    );
}

/// The endpoint's `GET` answer, edited, goes back as its `PUT` body: the
/// members the server sets (`secret`, `status`, `createdAt`,
/// `updatedAt`) are ignored, as a game mode's are (docs/webhooks.md).
async fn the_get_answer_is_taken_back_as_the_put_body(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let path = format!("/v1/projects/{p}/webhook");
    let url = "https://93.184.216.34/hooks/all";
    let created = t
        .call(Method::PUT, &path, Some(&key), Some(json!({"url": url})))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let secret = created.body["secret"].as_str().unwrap().to_owned();

    let mut read = t.call(Method::GET, &path, Some(&key), None).await.body;
    read["enabled"] = json!(false);
    read["secret"] = json!("whsec_bm90IHRoZSBzZWNyZXQgYXQgYWxsLCBqdXN0IGEgdGVzdA==");
    let sent = t.call(Method::PUT, &path, Some(&key), Some(read)).await;
    assert_eq!(sent.status, StatusCode::OK, "{}", sent.body);
    assert_eq!(sent.body["enabled"], false);
    assert_eq!(sent.body["url"], url);
    // The secret sent back signs nothing: the one shown at creation stays.
    let row = matchplane_store::repos::project_webhooks::get(&t.db, &p)
        .await
        .unwrap();
    assert_eq!(row.webhook_secret, secret);
    // Still refused: a member the answer never has.
    let mut unknown = t.call(Method::GET, &path, Some(&key), None).await.body;
    unknown["colour"] = json!("blue");
    let refused = t.call(Method::PUT, &path, Some(&key), Some(unknown)).await;
    refused.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(fields(&refused.body)[0].0, "colour", "{}", refused.body);
}
