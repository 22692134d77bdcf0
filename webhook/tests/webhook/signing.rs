//! The signature covers exactly the bytes on the wire (cases from the field).

use crate::common::fixtures::{delivery, match_message, secret};
use crate::common::receiver::{Received, Receiver, Reply};
use crate::common::verify::{verify, Rejected};
use chrono::Utc;
use matchplane_webhook::{Deliverer, DeliveryConfig, Outcome};

fn private() -> Deliverer {
    Deliverer::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    })
    .unwrap()
}

fn check(secret: &str, request: &Received, body: &[u8]) -> Result<(), Rejected> {
    verify(
        secret,
        &request.header("webhook-id"),
        &request.header("webhook-timestamp"),
        &request.header("webhook-signature"),
        body,
        request.received_at.timestamp(),
        300,
    )
}

/// What a JavaScript receiver does: parse, then stringify with sorted keys
/// and integral numbers written without a fraction.
fn reserialise(body: &[u8]) -> Vec<u8> {
    fn js(value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() == 0.0 => Value::from(f as i64),
                _ => Value::Number(n),
            },
            Value::Array(items) => Value::Array(items.into_iter().map(js).collect()),
            // serde_json's map is a BTreeMap here: keys come out sorted.
            Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, js(v))).collect()),
            other => other,
        }
    }
    serde_json::to_vec(&js(serde_json::from_slice(body).unwrap())).unwrap()
}

/// What a receiver that escapes non-ASCII does (`\uXXXX`, surrogate pairs).
fn ascii_escape(body: &[u8]) -> Vec<u8> {
    let mut out = String::new();
    for c in std::str::from_utf8(body).unwrap().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into_bytes()
}

#[tokio::test]
async fn the_raw_bytes_verify_and_a_reserialisation_does_not() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let key = secret(1);
    let message = match_message("mat_raw", "player-1");
    let sent = message.body.clone();
    let attempt = private()
        .attempt(&delivery(&receiver.url(), message, &[&key]), Utc::now())
        .await;
    assert_eq!(attempt.outcome, Outcome::Delivered);
    assert_eq!(attempt.status, Some(204));

    let request = &receiver.received()[0];
    assert_eq!(
        request.body, sent,
        "the body on the wire is the body built once"
    );
    assert_eq!(request.header("content-type"), "application/json");
    assert_eq!(request.header("webhook-id"), "mat_raw");
    assert_eq!(check(&key, request, &request.body), Ok(()));

    let text = String::from_utf8(request.body.clone()).unwrap();
    assert!(text.contains(r#""mmr":1500.0"#), "{text}");
    let rewritten = reserialise(&request.body);
    let rewritten_text = String::from_utf8(rewritten.clone()).unwrap();
    assert!(
        rewritten_text.contains(r#""mmr":1500,"#),
        "{rewritten_text}"
    );
    assert!(rewritten_text.starts_with(r#"{"createdAt""#), "sorted keys");
    assert_eq!(
        check(&key, request, &rewritten),
        Err(Rejected::BadSignature)
    );
}

#[tokio::test]
async fn non_ascii_is_signed_over_its_raw_utf8_bytes() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let key = secret(2);
    let attempt = private()
        .attempt(
            &delivery(&receiver.url(), match_message("mat_utf8", "Zoë🎮"), &[&key]),
            Utc::now(),
        )
        .await;
    assert_eq!(attempt.outcome, Outcome::Delivered);
    let request = &receiver.received()[0];
    let raw = "Zoë🎮".as_bytes();
    assert!(
        request.body.windows(raw.len()).any(|w| w == raw),
        "the player id travels as raw UTF-8"
    );
    assert_eq!(check(&key, request, &request.body), Ok(()));
    let escaped = ascii_escape(&request.body);
    assert!(String::from_utf8(escaped.clone())
        .unwrap()
        .contains(r"Zo\u00eb\ud83c\udfae"));
    assert_eq!(check(&key, request, &escaped), Err(Rejected::BadSignature));
}

#[tokio::test]
async fn two_rotation_secrets_give_two_signatures_that_each_verify() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let (new, old) = (secret(3), secret(4));
    private()
        .attempt(
            &delivery(
                &receiver.url(),
                match_message("mat_rot", "p"),
                &[&new, &old],
            ),
            Utc::now(),
        )
        .await;
    let request = &receiver.received()[0];
    let header = request.header("webhook-signature");
    let parts: Vec<&str> = header.split(' ').collect();
    assert_eq!(parts.len(), 2, "{header}");
    assert!(parts.iter().all(|p| p.starts_with("v1,")));
    for (key, signature) in [(&new, parts[0]), (&old, parts[1])] {
        let only_this = verify(
            key,
            &request.header("webhook-id"),
            &request.header("webhook-timestamp"),
            signature,
            &request.body,
            request.received_at.timestamp(),
            300,
        );
        assert_eq!(only_this, Ok(()));
    }
    assert_eq!(
        check(&secret(5), request, &request.body),
        Err(Rejected::BadSignature)
    );
}

#[tokio::test]
async fn the_answer_is_recorded_with_its_first_kibibyte() {
    let long = "x".repeat(3000);
    let receiver = Receiver::start(vec![], Reply::status(500).body(long)).await;
    let attempt = private()
        .attempt(
            &delivery(
                &receiver.url(),
                match_message("mat_rec", "p"),
                &[&secret(6)],
            ),
            Utc::now(),
        )
        .await;
    assert_eq!(attempt.status, Some(500));
    assert_eq!(attempt.error, None);
    assert_eq!(
        attempt.response_excerpt.as_deref().map(str::len),
        Some(1024)
    );
    assert!(attempt.latency_ms < 5_000);
    assert!(matches!(
        attempt.outcome,
        Outcome::Retryable { retry_after: None }
    ));
}

#[tokio::test]
async fn a_webhook_test_event_is_signed_and_verifies() {
    use matchplane_webhook::{Event, Message, WebhookTest};
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let key = secret(7);
    let event = Event::Test(WebhookTest {
        project_id: "prj_test".to_owned(),
        game_mode: "duel".to_owned(),
        created_at: Utc::now(),
    });
    let message = Message::new("tst_1", &event).unwrap();
    let attempt = private()
        .attempt(&delivery(&receiver.url(), message, &[&key]), Utc::now())
        .await;
    assert_eq!(attempt.outcome, Outcome::Delivered);
    let request = &receiver.received()[0];
    assert_eq!(request.header("webhook-id"), "tst_1");
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["type"], "webhook.test");
    assert_eq!(check(&key, request, &request.body), Ok(()));
}
