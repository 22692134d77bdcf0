//! Webhook secret rotation: every rotated-out secret signs for its own 24
//! hours, so two rotations within a day sign a webhook with three secrets,
//! each of which verifies on its own (Standard Webhooks, checked here with
//! a plain HMAC rather than the server's signing code).

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;
use std::sync::{Arc, Mutex};

type Seen = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// A receiver on loopback answering 200 and keeping headers and raw body.
async fn receiver() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().unwrap().push((headers, body));
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), seen)
}

/// `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` for `secret`.
fn expected_signature(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

async fn two_rotations_sign_with_all_three_secrets(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let (url, seen) = receiver().await;
    let mut body = mode("duel");
    body["webhook"]["url"] = json!(url);
    let base = format!("/v1/projects/{p}/game-modes/duel");
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut secrets = vec![created.body["webhook"]["secret"]
        .as_str()
        .unwrap()
        .to_owned()];
    for _ in 0..2 {
        let rotated = t
            .call(
                Method::POST,
                &format!("{base}/webhook/rotate-secret"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
        secrets.push(
            rotated.body["webhook"]["secret"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }

    let tested = t
        .call(
            Method::POST,
            &format!("{base}/webhook/test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.body);
    assert_eq!(tested.body["delivered"], true, "{}", tested.body);
    let (headers, raw) = seen.lock().unwrap().last().cloned().unwrap();
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp"));
    let signatures: Vec<String> = header("webhook-signature")
        .split(' ')
        .map(str::to_owned)
        .collect();
    assert_eq!(signatures.len(), 3, "{signatures:?}");
    // Newest secret first, then the ones it replaced, newest first.
    let expected: Vec<String> = secrets
        .iter()
        .rev()
        .map(|s| expected_signature(s, &id, &timestamp, &raw))
        .collect();
    assert_eq!(signatures, expected);
}

/// A webhook removed and given back gets a new secret, shown once, and
/// signs with it alone: neither the removed webhook's secret nor one it
/// had rotated out comes back (in an answer or in a signature).
async fn a_webhook_given_back_gets_a_new_secret(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let (url, seen) = receiver().await;
    let mut hooked = mode("duel");
    hooked["webhook"]["url"] = json!(url);
    let base = format!("/v1/projects/{p}/game-modes/duel");
    let created = t
        .call(Method::PUT, &base, Some(&key), Some(hooked.clone()))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let rotated = t
        .call(
            Method::POST,
            &format!("{base}/webhook/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let old: Vec<String> = [&created, &rotated]
        .iter()
        .map(|a| a.body["webhook"]["secret"].as_str().unwrap().to_owned())
        .collect();

    let mut bare = hooked.clone();
    bare.as_object_mut().unwrap().remove("webhook");
    let removed = t.call(Method::PUT, &base, Some(&key), Some(bare)).await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    assert!(removed.body.get("webhook").is_none(), "{}", removed.body);

    let back = t
        .call(Method::PUT, &base, Some(&key), Some(hooked.clone()))
        .await;
    assert_eq!(back.status, StatusCode::OK, "{}", back.body);
    let new = back.body["webhook"]["secret"].as_str().unwrap().to_owned();
    assert!(new.starts_with("whsec_") && !new.contains('*'), "{new}");
    assert!(!old.contains(&new), "{new} is a removed webhook's secret");
    // Shown once: the same PUT again, and a GET, mask it.
    for again in [
        t.call(Method::PUT, &base, Some(&key), Some(hooked)).await,
        t.call(Method::GET, &base, Some(&key), None).await,
    ] {
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
        assert_eq!(again.body["webhook"]["secret"], "whsec_********");
    }

    let tested = t
        .call(
            Method::POST,
            &format!("{base}/webhook/test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.body);
    let (headers, raw) = seen.lock().unwrap().last().cloned().unwrap();
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp"));
    assert_eq!(
        header("webhook-signature"),
        expected_signature(&new, &id, &timestamp, &raw),
        "signed with the new secret alone"
    );
}

on_both!(
    two_rotations_sign_with_all_three_secrets,
    a_webhook_given_back_gets_a_new_secret
);
