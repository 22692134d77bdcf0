//! `webhook.status` of a game mode (its view) and `webhookStatus` of its
//! stats: whether the mode's webhook deliveries are failing, written by the
//! worker after every attempt and cleared by the next success.

use chrono::{DateTime, Utc};
use matchplane_store::entities::webhook_health;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The delivery health of a mode's webhook.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"failing": true, "since": "2026-12-01T10:00:00.000Z",
    "lastError": "HTTP 503", "consecutiveFailures": 4,
    "lastFailureAt": "2026-12-01T10:00:18.000Z", "lastSuccessAt": "2026-12-01T09:58:02.000Z"}))]
pub struct WebhookStatus {
    /// Whether the last attempt failed (at least one failure since the last
    /// success).
    pub failing: bool,
    /// The first failed attempt since the last success; `null` when not failing.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub since: Option<DateTime<Utc>>,
    /// What the last failed attempt came to: `HTTP <status>`, or an error
    /// such as `timed out` or `the host … does not resolve` (never a URL),
    /// at most 300 characters (a longer one is cut, ending with `…`).
    /// Kept after a success, for reference.
    pub last_error: Option<String>,
    /// Attempts failed in a row since the last success (every attempt of a
    /// delivery counts, retries included).
    pub consecutive_failures: i64,
    /// When the last failed attempt was made.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub last_failure_at: Option<DateTime<Utc>>,
    /// When the last successful attempt was made.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub last_success_at: Option<DateTime<Utc>>,
}

impl WebhookStatus {
    /// The status of a mode with `health` (`None`: no attempt yet).
    pub fn from_health(health: Option<&webhook_health::Model>) -> Self {
        match health {
            None => Self {
                failing: false,
                since: None,
                last_error: None,
                consecutive_failures: 0,
                last_failure_at: None,
                last_success_at: None,
            },
            Some(h) => Self {
                failing: h.consecutive_failures > 0,
                since: h.failing_since.filter(|_| h.consecutive_failures > 0),
                last_error: h.last_error.as_deref().map(shown_error),
                consecutive_failures: h.consecutive_failures,
                last_failure_at: h.last_failure_at,
                last_success_at: h.last_success_at,
            },
        }
    }
}

/// Most characters of `lastError` shown; a longer error is cut there and
/// ends with `…`. It bounds what a mode's answer adds to its config
/// (`crate::routes::game_mode_checks::SERVER_SET_ROOM`).
pub const MAX_LAST_ERROR_CHARS: usize = 300;

/// `error` as shown: at most [`MAX_LAST_ERROR_CHARS`] characters.
fn shown_error(error: &str) -> String {
    match error.char_indices().nth(MAX_LAST_ERROR_CHARS) {
        None => error.to_owned(),
        Some((cut, _)) => {
            let kept = error[..cut]
                .char_indices()
                .nth(MAX_LAST_ERROR_CHARS - 1)
                .map_or(cut, |(at, _)| at);
            format!("{}…", &error[..kept])
        }
    }
}

/// Puts `status` into the `webhook` object of a mode's view (`view` is the
/// mode as answered); a view without one is left as it is.
pub fn attach(view: &mut Value, status: &WebhookStatus) {
    if let Some(Value::Object(webhook)) = view.get_mut("webhook") {
        webhook.insert(
            "status".into(),
            serde_json::to_value(status).unwrap_or(Value::Null),
        );
    }
}
