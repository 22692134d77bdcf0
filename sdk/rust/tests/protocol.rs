//! Standard Webhooks verification against the published example. The
//! checks against the server's own code (its status messages, its signer,
//! the OpenAPI document's version) are in the workspace's
//! tests/sdk_client.rs, so this crate needs nothing from the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_client::{verify_webhook_at, DEFAULT_TOLERANCE};
use reqwest::header::{HeaderMap, HeaderValue};

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
