//! The documented shape of a game mode as answered ([`GameModeView`],
//! docs/game-modes.md): the stored config with its defaults filled in, plus
//! the server-set fields. The answer is built as JSON from the stored
//! config, so it has no Rust type of its own; every block in it is the
//! matching core's own type (the body a studio writes is the core's
//! `GameModeConfig`, component `GameMode`).
//!
//! [`GameModeView`]: crate::routes::game_modes::GameModeView

use chrono::{DateTime, Utc};
use matchplane_matchmaker::acceptance::Acceptance;
use matchplane_matchmaker::assignment::Assignment;
use matchplane_matchmaker::backfill::BackfillConfig;
use matchplane_matchmaker::latency::Regions;
use matchplane_matchmaker::ratings::RatingsConfig;
use matchplane_matchmaker::recording::Recording;
use matchplane_matchmaker::roles::Composition;
use matchplane_matchmaker::rules::{Declaration, Rule};
use matchplane_matchmaker::{Algorithm, Bots, MatchShape, Parties, Relaxation, TeamAssignment};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A game mode as answered: the body with its defaults filled in, plus the
/// server-set fields. A body sent back with them (e.g. in a PUT) is
/// accepted; they are ignored.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "name": "duel", "enabled": true, "matchShape": [1, 1],
    "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
    "teamAssignment": "balanced",
    "parties": {"allowParties": false, "maxSize": 1, "keepTogether": true},
    "ticketTtlSeconds": 600,
    "webhook": {"url": "https://game.example.com/hooks/match", "enabled": true, "secret": "whsec_********"},
    "ratings": {"enabled": true, "tau": 0.5, "initialRating": 1500, "initialDeviation": 350,
        "initialVolatility": 0.06, "ratingPeriodSeconds": 86400},
    "version": 1, "createdAt": "2026-12-01T10:00:00.000Z", "updatedAt": "2026-12-01T10:00:00.000Z",
    "hold": null}))]
pub struct GameModeResponse {
    /// The mode's name.
    pub name: String,
    /// Whether the mode runs.
    pub enabled: bool,
    /// Players per team, or the flexible shape.
    pub match_shape: MatchShape,
    /// Seconds between cycles.
    pub matchmaking_cycle_duration_seconds: f64,
    /// How candidates are grouped.
    pub algorithm: Algorithm,
    /// How a full group is split into teams.
    pub team_assignment: TeamAssignment,
    /// Party rules.
    pub parties: Parties,
    /// Ticket lifetime (seconds).
    pub ticket_ttl_seconds: u32,
    /// Webhook destination and signing secret; absent for a mode without
    /// a webhook (which has no secret to show or rotate).
    pub webhook: Option<WebhookResponse>,
    /// Glicko-2 ratings, with their defaults filled in; absent: none.
    pub ratings: Option<RatingsConfig>,
    /// Relaxation steps; absent: none.
    pub relaxations: Option<Vec<Relaxation>>,
    /// Bot fill; absent: none.
    pub bots: Option<Bots>,
    /// Region rule; absent: none.
    pub regions: Option<Regions>,
    /// Match proposals; absent: none.
    pub acceptance: Option<Acceptance>,
    /// Assignment; absent: none.
    pub assignment: Option<Assignment>,
    /// Backfill; absent: off.
    pub backfill: Option<BackfillConfig>,
    /// Recording of searches; absent: off.
    pub recording: Option<Recording>,
    /// Declared ticket attributes; absent: none.
    pub attributes: Option<BTreeMap<String, Declaration>>,
    /// Rules over the attributes; absent: none.
    pub rules: Option<Vec<Rule>>,
    /// Role queues (docs/rules.md, "Role queues"); absent: none.
    pub composition: Option<Composition>,
    /// Starts at 1, +1 on every change.
    pub version: i64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// The mode's hold (docs/game-modes.md, "Holding matching"): since when and by whom;
    /// `null` when its matching is not held. Live state, not config:
    /// ignored when sent back.
    pub hold: Option<super::mode_hold::ModeHold>,
}

/// Webhook destination as answered.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookResponse {
    /// Destination URL (absent with `useProjectEndpoint`).
    #[schema(nullable = false)]
    pub url: Option<String>,
    /// Whether match-made events are sent.
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// Whether the mode delivers to the project's webhook endpoint (absent:
    /// `false`).
    #[schema(nullable = false)]
    pub use_project_endpoint: Option<bool>,
    /// `whsec_` + base64 of 32 random bytes: in full on create and rotate,
    /// `whsec_********` elsewhere.
    pub secret: String,
    /// Whether deliveries are failing (in `GET …/game-modes` and `GET
    /// …/game-modes/{name}`; ignored when sent back).
    pub status: Option<crate::routes::webhook_status::WebhookStatus>,
}
