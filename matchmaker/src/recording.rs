//! Recording of production arrivals (issue 22): the `recording` block of a
//! game mode, `{"enabled": true, "retentionDays": 7}`.
//!
//! With recording enabled, the API keeps every search start (time, a keyed
//! hash of the player id, MMR, latencies, the party's hashed id and
//! members), cancel and end of the mode, pruned after `retentionDays`
//! (at most the tier's `retentionDays`). The recording is read back as
//! `simulate`'s `arrivalsCsv` with an `event` column
//! ([`crate::simulate::write_arrivals_csv`]) and replayed under two configs
//! ([`crate::simulate::compare`]), which the config guard does on a guarded
//! `PUT`.

use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::tier::Tier;
use serde::{Deserialize, Serialize};

/// `retentionDays` when the block leaves it out.
pub const DEFAULT_RETENTION_DAYS: u32 = 7;

/// The `recording` block: a mode's search starts (player ids as keyed
/// hashes, MMR, latencies, party), cancels and ends, kept `retentionDays`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"enabled": true, "retentionDays": 7})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Recording {
    /// Whether search starts, cancels and ends are recorded.
    pub enabled: bool,
    /// Days a recorded event is kept (1 to the tier's `retentionDays`;
    /// default 7).
    #[serde(default = "default_retention_days")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub retention_days: u32,
}

fn default_retention_days() -> u32 {
    DEFAULT_RETENTION_DAYS
}

impl GameModeConfig {
    /// Whether this mode records its searches (a `recording` block with
    /// `enabled`).
    pub fn records(&self) -> bool {
        self.recording.as_ref().is_some_and(|r| r.enabled)
    }
}

/// The `recording` rules, pushed into the caller's list of failures:
/// `retentionDays` is 1 to the tier's `retentionDays` (`VALIDATION_ERROR`
/// on `recording.retentionDays`).
pub(crate) fn check_recording(
    config: &GameModeConfig,
    tier: &Tier,
    push: &mut impl FnMut(&str, Code, String),
) {
    let Some(recording) = &config.recording else {
        return;
    };
    if recording.retention_days < 1 || recording.retention_days > tier.retention_days {
        push(
            "recording.retentionDays",
            Code::ValidationError,
            format!(
                "retentionDays must be 1 to {} (the {} tier's retention)",
                tier.retention_days, tier.name
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::validation::validate;
    use crate::{GameModeConfig, Tier};

    fn mode(recording: &str) -> GameModeConfig {
        serde_json::from_str(&format!(
            r#"{{"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 5,
               "algorithm": {{"type": "fifo"}}, "recording": {recording}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn retention_is_bounded_by_the_tier() {
        let free = Tier::free();
        assert!(validate(&mode(r#"{"enabled": true, "retentionDays": 30}"#), &free).is_ok());
        assert!(validate(&mode(r#"{"enabled": true}"#), &free).is_ok());
        let err = validate(&mode(r#"{"enabled": true, "retentionDays": 31}"#), &free).unwrap_err();
        assert_eq!(err.0.len(), 1);
        assert_eq!(err.0[0].field, "recording.retentionDays");
        assert!(err.0[0].message.contains("30"), "{}", err.0[0].message);
        assert!(validate(
            &mode(r#"{"enabled": true, "retentionDays": 31}"#),
            &Tier::pro()
        )
        .is_ok());
        let zero = validate(&mode(r#"{"enabled": false, "retentionDays": 0}"#), &free).unwrap_err();
        assert_eq!(zero.0[0].field, "recording.retentionDays");
    }

    #[test]
    fn unknown_members_are_refused_and_the_default_is_seven_days() {
        let err = serde_json::from_str::<GameModeConfig>(
            r#"{"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 5,
               "algorithm": {"type": "fifo"}, "recording": {"enabled": true, "days": 3}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("days"), "{err}");
        let m = mode(r#"{"enabled": true}"#);
        assert!(m.records());
        assert_eq!(m.recording.unwrap().retention_days, 7);
        assert!(!mode(r#"{"enabled": false}"#).records());
    }
}
