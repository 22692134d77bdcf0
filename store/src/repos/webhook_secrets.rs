//! Which webhook secrets of a game mode sign at a given time (docs/webhook-events.md).
//!
//! A rotation replaces the current secret; the secret it replaced keeps
//! signing for [`GRACE`] from that rotation. Every rotated-out secret keeps
//! its own 24 hours: a second rotation within them does not cut the first
//! one short, so two rotations in a day sign with three secrets. The last
//! rotated-out secret sits in `previous_webhook_secret`; older ones still in
//! their grace period sit in `older_webhook_secrets`. A project's webhook
//! endpoint (`project_webhooks`) keeps the same three columns and rotates
//! by the same rules: every function here takes either row ([`Slots`]).

use crate::entities::{game_mode, project_webhook};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long a rotated-out secret keeps signing: 24 hours from its rotation.
pub const GRACE: Duration = Duration::hours(24);

/// A rotated-out secret and the end of its grace period, as kept in
/// `older_webhook_secrets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetiredSecret {
    /// `whsec_…`.
    pub secret: String,
    /// It signs while `now < expires_at`.
    pub expires_at: DateTime<Utc>,
}

/// The secret columns of a row that signs webhooks: a game mode's or a
/// project endpoint's.
#[derive(Debug, Clone, Copy)]
pub struct Slots<'a> {
    /// `webhook_secret`.
    pub current: &'a str,
    /// `previous_webhook_secret`.
    pub previous: Option<&'a str>,
    /// `previous_secret_expires_at`.
    pub previous_expires_at: Option<DateTime<Utc>>,
    /// `older_webhook_secrets`.
    pub older: Option<&'a Value>,
}

impl<'a> From<&'a game_mode::Model> for Slots<'a> {
    fn from(row: &'a game_mode::Model) -> Self {
        Slots {
            current: &row.webhook_secret,
            previous: row.previous_webhook_secret.as_deref(),
            previous_expires_at: row.previous_secret_expires_at,
            older: row.older_webhook_secrets.as_ref(),
        }
    }
}

impl<'a> From<&'a project_webhook::Model> for Slots<'a> {
    fn from(row: &'a project_webhook::Model) -> Self {
        Slots {
            current: &row.webhook_secret,
            previous: row.previous_webhook_secret.as_deref(),
            previous_expires_at: row.previous_secret_expires_at,
            older: row.older_webhook_secrets.as_ref(),
        }
    }
}

/// Every rotated-out secret of `row` still in grace at `now`, newest first.
/// Unreadable entries of `older_webhook_secrets` are skipped.
pub fn retired_at<'a>(row: impl Into<Slots<'a>>, now: DateTime<Utc>) -> Vec<RetiredSecret> {
    let row: Slots<'a> = row.into();
    let previous = match (row.previous, row.previous_expires_at) {
        (Some(secret), Some(expires_at)) => Some(RetiredSecret {
            secret: secret.to_owned(),
            expires_at,
        }),
        _ => None,
    };
    let older = row
        .older
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| serde_json::from_value::<RetiredSecret>(entry.clone()).ok());
    let mut retired: Vec<RetiredSecret> = previous
        .into_iter()
        .chain(older)
        .filter(|r| now < r.expires_at)
        .collect();
    retired.sort_by_key(|r| std::cmp::Reverse(r.expires_at));
    retired.dedup_by(|a, b| a.secret == b.secret);
    retired
}

/// The secrets that sign a webhook of `row` at `now`: the current one
/// first, then every rotated-out one still in its grace period, newest
/// first.
pub fn signing_at<'a>(row: impl Into<Slots<'a>>, now: DateTime<Utc>) -> Vec<String> {
    let row: Slots<'a> = row.into();
    std::iter::once(row.current.to_owned())
        .chain(
            retired_at(row, now)
                .into_iter()
                .map(|r| r.secret)
                .filter(|s| s != row.current),
        )
        .collect()
}

/// `older_webhook_secrets` after rotating `row` at `now`: every secret
/// still in grace (the current previous one included, which the rotation
/// moves out of `previous_webhook_secret`), as a JSON array.
pub fn older_after_rotation<'a>(row: impl Into<Slots<'a>>, now: DateTime<Utc>) -> Value {
    let kept: Vec<Value> = retired_at(row, now)
        .into_iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    Value::Array(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(at: DateTime<Utc>) -> game_mode::Model {
        game_mode::Model {
            id: "gm_1".into(),
            project_id: "prj_1".into(),
            name: "duel".into(),
            config: json!({}),
            version: 1,
            webhook_secret: "whsec_a".into(),
            previous_webhook_secret: None,
            previous_secret_expires_at: None,
            older_webhook_secrets: None,
            created_at: at,
            updated_at: at,
            held_at: None,
            held_by: None,
        }
    }

    /// What `game_modes::rotate_secret` writes, in memory.
    fn rotate(mut mode: game_mode::Model, new: &str, now: DateTime<Utc>) -> game_mode::Model {
        mode.older_webhook_secrets = Some(older_after_rotation(&mode, now));
        mode.previous_webhook_secret = Some(mode.webhook_secret.clone());
        mode.previous_secret_expires_at = Some(now + GRACE);
        mode.webhook_secret = new.into();
        mode
    }

    #[test]
    fn every_secret_keeps_its_own_24_hours() {
        let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let once = rotate(row(t0), "whsec_b", t0);
        let twice = rotate(once, "whsec_c", t0 + Duration::hours(2));
        let three = rotate(twice.clone(), "whsec_d", t0 + Duration::hours(3));
        assert_eq!(
            signing_at(&twice, t0 + Duration::hours(2)),
            ["whsec_c", "whsec_b", "whsec_a"]
        );
        assert_eq!(
            signing_at(&three, t0 + Duration::hours(23)),
            ["whsec_d", "whsec_c", "whsec_b", "whsec_a"]
        );
        // a's day ends at 24 h, b's at 26 h, c's at 27 h.
        assert_eq!(
            signing_at(&three, t0 + Duration::hours(24)),
            ["whsec_d", "whsec_c", "whsec_b"]
        );
        assert_eq!(
            signing_at(&three, t0 + Duration::hours(26)),
            ["whsec_d", "whsec_c"]
        );
        assert_eq!(signing_at(&three, t0 + Duration::hours(27)), ["whsec_d"]);
        // A rotation after a's day drops it from storage too.
        let late = rotate(three, "whsec_e", t0 + Duration::hours(25));
        assert_eq!(
            signing_at(&late, t0 + Duration::hours(25)),
            ["whsec_e", "whsec_d", "whsec_c", "whsec_b"]
        );
        assert_eq!(
            late.older_webhook_secrets
                .unwrap()
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
}
