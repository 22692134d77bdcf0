//! The `backfill` block of a game mode and its validation.

use crate::codes::Code;
use crate::config::GameModeConfig;
use serde::{Deserialize, Serialize};

/// Shortest `ttlSeconds` of a backfill request (seconds).
pub const MIN_TTL_SECONDS: u32 = 5;
/// Longest `ttlSeconds` of a backfill request (seconds).
pub const MAX_TTL_SECONDS: u32 = 3600;

/// `"backfill": {"enabled": true, "auto": false, "ttlSeconds": 120}`
/// (docs/backfill.md): studios may ask for replacements of players who
/// left (`POST …/matches/{matchId}/backfill`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Backfill, example = json!({"enabled": true, "auto": false, "ttlSeconds": 120})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackfillConfig {
    /// Whether studios may open backfill requests for this mode's matches
    /// (refused with `BACKFILL_NOT_ENABLED` otherwise). Default `true`.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Whether a match made with empty seats (a relaxed shape, replaceable
    /// bot seats) opens a backfill for them at once. Default `false`.
    #[serde(default)]
    pub auto: bool,
    /// How long a request stays open (seconds, 5..=3600). Default 120.
    #[serde(default = "default_ttl")]
    #[cfg_attr(feature = "openapi", schema(minimum = 5, maximum = 3600))]
    pub ttl_seconds: u32,
}

fn default_true() -> bool {
    true
}

fn default_ttl() -> u32 {
    120
}

impl Default for BackfillConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            auto: false,
            ttl_seconds: default_ttl(),
        }
    }
}

impl GameModeConfig {
    /// The `backfill` block when backfill is on.
    pub fn backfill_enabled(&self) -> Option<&BackfillConfig> {
        self.backfill.as_ref().filter(|b| b.enabled)
    }
}

/// The `backfill` block's rules: `ttlSeconds` 5..=3600.
pub(crate) fn check_backfill(config: &GameModeConfig, push: &mut impl FnMut(&str, Code, String)) {
    let Some(block) = &config.backfill else {
        return;
    };
    if !(MIN_TTL_SECONDS..=MAX_TTL_SECONDS).contains(&block.ttl_seconds) {
        push(
            "backfill.ttlSeconds",
            Code::ValidationError,
            format!(
                "ttlSeconds must be {MIN_TTL_SECONDS} to {MAX_TTL_SECONDS}, is {}",
                block.ttl_seconds
            ),
        );
    }
}
