//! OpenAPI schemas of the webhook bodies (docs/webhook-events.md): `match.made`,
//! `match.backfilled` and `webhook.test`, as the worker serialises them
//! (`matchplane_webhook::Event`, tagged by `type`). Only the envelopes
//! live here; their teams and quality are the webhook crate's own types
//! (derived under its `openapi` feature). A test validates the worker's
//! own bodies against them.

use matchplane_webhook::payload::{Quality, TeamWire};
use serde::Serialize;
use utoipa::ToSchema;

/// `type` of a `match.made` body.
#[derive(Debug, Serialize, ToSchema)]
pub enum MatchMadeType {
    /// The only value.
    #[serde(rename = "match.made")]
    MatchMade,
}

/// `type` of a `webhook.test` body.
#[derive(Debug, Serialize, ToSchema)]
pub enum WebhookTestType {
    /// The only value.
    #[serde(rename = "webhook.test")]
    WebhookTest,
}

/// The `match.made` body: a match was formed and recorded.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"type": "match.made", "matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0",
    "projectId": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9", "gameMode": "duel", "gameModeVersion": 1,
    "createdAt": "2026-12-01T10:00:03.120Z",
    "teams": [
        {"index": 0, "players": [{"playerId": "ana", "ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "partyId": null, "mmr": 1500.0, "pingMs": null, "waitSeconds": 2.4}], "meanMmr": 1500.0},
        {"index": 1, "players": [{"playerId": "ben", "ticketId": "tkt_01JDZ8M5R8P5X2Z9B6W4D3C7E0", "partyId": null, "mmr": 1520.0, "pingMs": null, "waitSeconds": 1.1}], "meanMmr": 1520.0}],
    "quality": {"mmrSpread": 20.0, "teamImbalance": 20.0},
    "matchShape": [1, 1], "seatsOpen": [0, 0]}))]
pub struct MatchMadeEvent {
    /// Always `match.made`.
    #[serde(rename = "type")]
    pub kind: MatchMadeType,
    /// `mat_…`, also the `webhook-id`.
    pub match_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The game mode's config version the match was made under.
    #[schema(minimum = 1)]
    pub game_mode_version: i64,
    /// When the match was recorded (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Teams in match-shape order.
    #[schema(min_items = 1)]
    #[schema(value_type = Vec<TeamWire>)]
    pub teams: Vec<serde_json::Value>,
    /// How close the match is (over humans only).
    #[schema(value_type = Quality)]
    pub quality: serde_json::Value,
    /// The shape used, players per team: the mode's shape, a relaxed one,
    /// or a settled flexible match's team sizes; a bot match's is the
    /// mode's shape.
    pub match_shape: Vec<u32>,
    /// Seats open to backfill per team: the mode's shape minus the one
    /// used, or a bot match's bot seats when they are replaceable.
    pub seats_open: Vec<u32>,
    /// The region the match is played in; absent in modes without `regions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// With `backfill.auto` and open seats: the backfill request opened
    /// for them (`bf_…`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill_id: Option<String>,
}

/// `type` of a `match.backfilled` body.
#[derive(Debug, Serialize, ToSchema)]
pub enum MatchBackfilledType {
    /// The only value.
    #[serde(rename = "match.backfilled")]
    MatchBackfilled,
}

/// The `match.backfilled` body: a fill seated new players in a running
/// match. Its `webhook-id` is `fillId`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchBackfilledEvent {
    /// Always `match.backfilled`.
    #[serde(rename = "type")]
    pub kind: MatchBackfilledType,
    /// The running match, `mat_…`.
    pub match_id: String,
    /// The request filled, `bf_…`.
    pub backfill_id: String,
    /// This fill, `bff_…`, also the `webhook-id`.
    pub fill_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The game mode's config version the fill was made under.
    #[schema(minimum = 1)]
    pub game_mode_version: i64,
    /// When the fill was claimed (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// The teams that got players, each with only its new players (each
    /// with `"backfill": true`).
    #[schema(value_type = Vec<TeamWire>)]
    pub teams: Vec<serde_json::Value>,
    /// Open seats per team after this fill.
    pub open_seats_left: Vec<u32>,
}

/// The `webhook.test` body, sent on demand to check an endpoint.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"type": "webhook.test", "projectId": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9",
    "gameMode": "duel", "createdAt": "2026-12-01T10:00:00.000Z"}))]
pub struct WebhookTestEvent {
    /// Always `webhook.test`.
    #[serde(rename = "type")]
    pub kind: WebhookTestType,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode whose webhook is tested.
    pub game_mode: String,
    /// When the test was requested (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub created_at: String,
}
