//! The SDK reads what the server's own code writes: every status message
//! the server serialises, and every signature header its signer makes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_client::{verify_webhook_at, SearchMessage, WebhookError, DEFAULT_TOLERANCE};
use matchplane_store::tickets::StatusMessage;
use matchplane_webhook::{signature_header, Secret};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::json;

#[test]
fn every_server_message_is_a_known_message() {
    let server = [
        StatusMessage::Searching {
            ticket_id: "tkt_1".into(),
            game_mode: "duel".into(),
            queued_at: "2026-12-01T10:00:00.000Z".into(),
        },
        StatusMessage::Status {
            wait_seconds: 1.5,
            ping_ms: Some(12.0),
            waiting_reason: Some(json!({"code": "NO_CANDIDATES"})),
            found: Some(4),
            needed: Some(10),
        },
        StatusMessage::Matched {
            match_: matchplane_matchmaker::RawJson::of(
                &json!({"matchId": "mat_1", "teams": [["a"], ["b"]]}),
            )
            .unwrap(),
        },
        StatusMessage::Failed {
            code: "GAME_MODE_DISABLED".into(),
            message: "off".into(),
        },
        StatusMessage::Cancelled,
        StatusMessage::Expired {
            reason: Some("PONG_TIMEOUT".into()),
        },
        StatusMessage::Expired { reason: None },
    ];
    for message in server {
        let json = message.to_json();
        let parsed = SearchMessage::parse(&json);
        assert!(!matches!(parsed, SearchMessage::Unknown(_)), "{json}");
        let wire: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed.kind(), wire["type"], "{json}");
        assert_eq!(
            parsed.ends_search(),
            message.is_final() && parsed.kind() != "matched"
        );
    }
}

fn headers(id: &str, timestamp: i64, signature: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("webhook-id", HeaderValue::from_str(id).unwrap());
    h.insert(
        "webhook-timestamp",
        HeaderValue::from_str(&timestamp.to_string()).unwrap(),
    );
    h.insert(
        "webhook-signature",
        HeaderValue::from_str(signature).unwrap(),
    );
    h
}

#[test]
fn the_servers_signatures_verify_during_a_rotation_and_within_the_window() {
    let old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let new = matchplane_webhook::generate_secret(&mut rand_source());
    let body = br#"{"type":"match.made","matchId":"mat_1"}"#;
    let both = [
        Secret::parse(new.as_str()).unwrap(),
        Secret::parse(old).unwrap(),
    ];
    let h = headers(
        "mat_1",
        1_000_000,
        &signature_header(&both, "mat_1", 1_000_000, body),
    );
    for secret in [old, new.as_str()] {
        verify_webhook_at(secret, &h, body, 1_000_000, DEFAULT_TOLERANCE).unwrap();
        verify_webhook_at(secret, &h, body, 1_000_000 + 300, DEFAULT_TOLERANCE).unwrap();
        assert_eq!(
            verify_webhook_at(secret, &h, body, 1_000_000 + 301, DEFAULT_TOLERANCE),
            Err(WebhookError::Expired)
        );
        assert_eq!(
            verify_webhook_at(secret, &h, body, 1_000_000 - 301, DEFAULT_TOLERANCE),
            Err(WebhookError::Expired)
        );
    }
    let third = "whsec_dGhpcmQgc2VjcmV0IGtleSBieXRlcw==";
    assert_eq!(
        verify_webhook_at(third, &h, body, 1_000_000, DEFAULT_TOLERANCE),
        Err(WebhookError::Signature)
    );
    // Another id or timestamp than the one signed fails.
    let sig = h["webhook-signature"].to_str().unwrap().to_owned();
    let moved = headers("mat_2", 1_000_000, &sig);
    assert!(verify_webhook_at(old, &moved, body, 1_000_000, DEFAULT_TOLERANCE).is_err());
    let later = headers("mat_1", 1_000_001, &sig);
    assert!(verify_webhook_at(old, &later, body, 1_000_000, DEFAULT_TOLERANCE).is_err());
    let mut none = h.clone();
    none.remove("webhook-id");
    assert_eq!(
        verify_webhook_at(old, &none, body, 1_000_000, DEFAULT_TOLERANCE),
        Err(WebhookError::MissingHeader("webhook-id"))
    );
    assert_eq!(
        verify_webhook_at("nope", &h, body, 1_000_000, DEFAULT_TOLERANCE),
        Err(WebhookError::Secret)
    );
}

/// The published Standard Webhooks example.
#[test]
fn the_published_example_verifies() {
    let h = headers(
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1_614_265_330,
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
    let body = br#"{"test": 2432232314}"#;
    verify_webhook_at(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        &h,
        body,
        1_614_265_330,
        DEFAULT_TOLERANCE,
    )
    .unwrap();
}

fn rand_source() -> impl rand::RngCore {
    use rand::SeedableRng;
    rand::rngs::StdRng::seed_from_u64(21)
}

#[test]
fn the_sdk_speaks_the_documents_api_version() {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../../../openapi/openapi.json")).unwrap();
    assert_eq!(doc["info"]["version"], matchplane_client::API_VERSION);
    assert!(include_str!("../README.md")
        .contains(&format!("API version {}", matchplane_client::API_VERSION)));
}
