//! Assignment (docs/acceptance.md): the `assignment` block of a game mode, and how a
//! player's assignment is merged.
//!
//! With `"assignment": {"waitSeconds": 60}`, a made match waits for the
//! studio's backend to post where to play; every player's search stays
//! open until then. No assignment within `waitSeconds`: the match is
//! released (`unassigned`) and its still-connected players are requeued.

use crate::codes::Code;
use crate::config::GameModeConfig;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Longest `waitSeconds` (seconds).
pub const MAX_WAIT_SECONDS: f64 = 600.0;

/// Shortest release window (seconds, docs/acceptance.md): a made match may be
/// released while younger than max(this, `waitSeconds`).
pub const RELEASE_WINDOW_SECONDS: f64 = 120.0;

/// The `assignment` block (docs/acceptance.md): a made match's searches stay
/// open until the studio posts where to play (`POST
/// …/matches/{matchId}/assignment`), at most `waitSeconds`;
/// `{"waitSeconds": 60}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"waitSeconds": 60})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Assignment {
    /// How long a made match waits for its assignment (seconds, 1..=600).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 600))]
    pub wait_seconds: f64,
}

/// The release window of a mode (seconds): max(120, `waitSeconds`).
pub fn release_window(config: Option<&GameModeConfig>) -> f64 {
    let wait = config
        .and_then(|c| c.assignment.as_ref())
        .map_or(0.0, |a| a.wait_seconds);
    RELEASE_WINDOW_SECONDS.max(wait)
}

/// The `assignment` rules, pushed into the caller's list of failures.
pub(crate) fn check_assignment(config: &GameModeConfig, push: &mut impl FnMut(&str, Code, String)) {
    let Some(assignment) = &config.assignment else {
        return;
    };
    if !(1.0..=MAX_WAIT_SECONDS).contains(&assignment.wait_seconds) {
        push(
            "assignment.waitSeconds",
            Code::ValidationError,
            format!("waitSeconds must be 1 to {MAX_WAIT_SECONDS} seconds"),
        );
    }
}

/// One player's assignment `data`: the match's `data` with the player's
/// own `data` merged over it, key by key (the player's value wins); either
/// may be absent. A non-object is taken as no data.
pub fn merged_data(matched: Option<&Value>, own: Option<&Value>) -> Value {
    let mut out: Map<String, Value> = matched
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(own) = own.and_then(Value::as_object) {
        for (key, value) in own {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mode(assignment: &str) -> GameModeConfig {
        serde_json::from_str(&format!(
            r#"{{"name": "m", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                "algorithm": {{"type": "fifo"}}, "assignment": {assignment}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn wait_seconds_is_one_to_six_hundred() {
        let tier = crate::Tier::enterprise();
        for bad in ["0", "601", "0.5"] {
            let errors =
                crate::validate(&mode(&format!(r#"{{"waitSeconds": {bad}}}"#)), &tier).unwrap_err();
            let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
            assert_eq!(fields, ["assignment.waitSeconds"], "{bad}");
        }
        for good in ["1", "600"] {
            assert!(
                crate::validate(&mode(&format!(r#"{{"waitSeconds": {good}}}"#)), &tier).is_ok()
            );
        }
        assert!(serde_json::from_str::<Assignment>(r#"{"waitSeconds": 5, "x": 1}"#).is_err());
    }

    #[test]
    fn the_window_is_at_least_two_minutes() {
        assert_eq!(release_window(None), 120.0);
        assert_eq!(release_window(Some(&mode(r#"{"waitSeconds": 60}"#))), 120.0);
        assert_eq!(
            release_window(Some(&mode(r#"{"waitSeconds": 300}"#))),
            300.0
        );
    }

    #[test]
    fn own_data_is_merged_over_the_matchs() {
        let matched = json!({"map": "dust", "token": "shared"});
        let own = json!({"token": "mine", "seat": 3});
        assert_eq!(
            merged_data(Some(&matched), Some(&own)),
            json!({"map": "dust", "token": "mine", "seat": 3})
        );
        assert_eq!(merged_data(None, None), json!({}));
        assert_eq!(merged_data(Some(&matched), None), matched);
    }
}
