//! What a mode's answer adds to its config stays within the room the body
//! limit keeps for it (docs/config-as-code.md, "Create or update with
//! `PUT`"), so that any answer can be sent back.

use super::view;
use crate::routes::api_keys::MAX_LABEL_CHARS;
use crate::routes::game_mode_checks::SERVER_SET_ROOM;
use crate::routes::webhook_status::{self, WebhookStatus};
use chrono::{DateTime, Utc};
use matchplane_store::entities::{game_mode, webhook_health};
use serde_json::json;

/// The largest value of every server-set member at once: the largest
/// version, timestamps of year 9999, a hold by a key whose name is its
/// longest in 4-byte characters, the full secret, and a failing status
/// whose error escapes to six bytes a character.
#[test]
fn the_server_set_members_fit_their_room() {
    let latest: DateTime<Utc> = "9999-12-31T23:59:59.999Z".parse().unwrap();
    let config = json!({
        "name": "m",
        "webhook": {"url": "https://93.184.216.34/hook", "enabled": true}
    });
    let mode = game_mode::Model {
        id: "gm_01JDZ8K0A1B2C3D4E5F6G7H8J9".to_owned(),
        project_id: "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9".to_owned(),
        name: "m".to_owned(),
        config: config.clone(),
        version: i64::MAX,
        webhook_secret: format!("whsec_{}", "A".repeat(44)),
        previous_webhook_secret: None,
        previous_secret_expires_at: None,
        older_webhook_secrets: None,
        created_at: latest,
        updated_at: latest,
        held_at: Some(latest),
        held_by: Some("\u{1D11E}".repeat(MAX_LABEL_CHARS)),
    };
    let health = webhook_health::Model {
        project_id: mode.project_id.clone(),
        game_mode: mode.name.clone(),
        consecutive_failures: i64::MAX,
        failing_since: Some(latest),
        last_error: Some("\u{1}".repeat(10_000)),
        last_failure_at: Some(latest),
        last_success_at: Some(latest),
        updated_at: latest,
    };
    let mut answer = view(&mode, true);
    webhook_status::attach(&mut answer.0, &WebhookStatus::from_health(Some(&health)));
    let answered = serde_json::to_vec(&answer.0).unwrap().len();
    let stored = serde_json::to_vec(&config).unwrap().len();
    assert!(
        answered - stored <= SERVER_SET_ROOM,
        "the answer adds {} bytes, the room is {SERVER_SET_ROOM}",
        answered - stored
    );
}
