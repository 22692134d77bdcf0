//! Standard Webhooks verification of matchplane's webhooks:
//! `webhook-signature: v1,<base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>"))>`,
//! several space-separated signatures during a secret rotation, and a
//! tolerance window on `webhook-timestamp` against replays.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use reqwest::header::HeaderMap;
use sha2::Sha256;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How far `webhook-timestamp` may be from now (either way): 5 minutes,
/// as the Standard Webhooks libraries use.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// Why a webhook was refused. Never carries the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// The secret is not `whsec_<base64>`.
    #[error("the webhook secret is not `whsec_<base64>`")]
    Secret,
    /// A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is missing.
    #[error("the `{0}` header is missing")]
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not unix seconds.
    #[error("`webhook-timestamp` is not unix seconds")]
    BadTimestamp,
    /// `webhook-timestamp` is outside the tolerance window.
    #[error("`webhook-timestamp` is too far from now")]
    Expired,
    /// No `v1` signature of the header matches.
    #[error("no signature matches")]
    Signature,
}

/// Verifies a webhook with the mode's secret (`whsec_…`), the request's
/// headers and the raw body bytes exactly as received (never a
/// re-serialisation), with [`DEFAULT_TOLERANCE`] around the clock's now.
///
/// # Errors
/// [`WebhookError`] saying why the webhook is not authentic.
pub fn verify_webhook(
    secret: &str,
    headers: &HeaderMap,
    raw_body: &[u8],
) -> Result<(), WebhookError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    verify_webhook_at(secret, headers, raw_body, now, DEFAULT_TOLERANCE)
}

/// [`verify_webhook`] at a given `now` (unix seconds) and tolerance.
///
/// # Errors
/// As [`verify_webhook`].
pub fn verify_webhook_at(
    secret: &str,
    headers: &HeaderMap,
    raw_body: &[u8],
    now: i64,
    tolerance: Duration,
) -> Result<(), WebhookError> {
    let key = secret
        .strip_prefix("whsec_")
        .and_then(|k| STANDARD.decode(k.trim()).ok())
        .filter(|k| !k.is_empty())
        .ok_or(WebhookError::Secret)?;
    let header = |name: &'static str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .ok_or(WebhookError::MissingHeader(name))
    };
    let id = header("webhook-id")?;
    let timestamp = header("webhook-timestamp")?;
    let signatures = header("webhook-signature")?;
    let sent: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| WebhookError::BadTimestamp)?;
    let window = i64::try_from(tolerance.as_secs()).unwrap_or(i64::MAX);
    if now.abs_diff(sent) > window.unsigned_abs() {
        return Err(WebhookError::Expired);
    }
    let mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| WebhookError::Secret)?;
    let mut mac = mac;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.trim().as_bytes());
    mac.update(b".");
    mac.update(raw_body);
    let matches = signatures
        .split(' ')
        .filter_map(|part| part.split_once(','))
        .filter(|(version, _)| *version == "v1")
        .filter_map(|(_, sig)| STANDARD.decode(sig).ok())
        // `verify_slice` compares in constant time.
        .any(|sig| mac.clone().verify_slice(&sig).is_ok());
    if matches {
        Ok(())
    } else {
        Err(WebhookError::Signature)
    }
}
