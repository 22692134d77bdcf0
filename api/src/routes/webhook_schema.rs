//! OpenAPI schemas of the webhook bodies (SPEC 6): `match.made` and
//! `webhook.test`, as the worker serialises them
//! (`matchplane_webhook::Event`). They describe the same JSON for
//! the document's `webhooks`; a test validates the worker's own bodies
//! against them.

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
    pub created_at: String,
    /// Teams in match-shape order.
    #[schema(min_items = 1)]
    pub teams: Vec<WebhookTeam>,
    /// How close the match is (over humans only).
    pub quality: WebhookQuality,
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
    pub created_at: String,
    /// The teams that got players, each with only its new players (each
    /// with `"backfill": true`).
    pub teams: Vec<WebhookTeam>,
    /// Open seats per team after this fill.
    pub open_seats_left: Vec<u32>,
}

/// One team of a `match.made` body.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookTeam {
    /// Position in the match shape, from 0.
    #[schema(minimum = 0)]
    pub index: u32,
    /// The seated players, then the team's bot seats.
    pub players: Vec<WebhookSeat>,
    /// Mean MMR of the players that carry one; `null` if none does.
    pub mean_mmr: Option<f64>,
}

/// A seat of a `match.made` team: a player, or a bot.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum WebhookSeat {
    /// A matched player.
    Player(WebhookPlayer),
    /// A bot seat.
    Bot(WebhookBotSeat),
}

/// A bot seat completing a match of too few humans.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookBotSeat {
    /// Always `true`.
    pub bot: bool,
    /// Always `null`.
    #[schema(value_type = Option<String>)]
    pub player_id: Option<String>,
    /// Always `null`.
    #[schema(value_type = Option<String>)]
    pub ticket_id: Option<String>,
    /// Mean MMR of the match's humans; `null` without MMRs.
    pub mmr: Option<f64>,
}

/// One player of a `match.made` body.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookPlayer {
    /// The studio's player id.
    pub player_id: String,
    /// `tkt_…` of the matched search.
    pub ticket_id: String,
    /// The party id, `null` for a solo player.
    pub party_id: Option<String>,
    /// The ticket's MMR, if any.
    pub mmr: Option<f64>,
    /// The search's ping in milliseconds, if measured.
    pub ping_ms: Option<f64>,
    /// Seconds the search waited until the cycle that matched it.
    #[schema(minimum = 0)]
    pub wait_seconds: f64,
    /// The player's latency to the match's region (milliseconds); absent
    /// in modes without `regions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub latency_ms: Option<f64>,
    /// The ticket's `attributes.data`, byte for byte as the studio sent
    /// it; absent when the ticket had none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>, nullable = false)]
    pub data: Option<serde_json::Value>,
    /// `true` for a player a backfill seated after the match was made;
    /// absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub backfill: bool,
}

/// Match quality figures.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookQuality {
    /// Max minus min player MMR (0 without MMRs).
    #[schema(minimum = 0)]
    pub mmr_spread: f64,
    /// Max minus min team mean MMR (0 without MMRs).
    #[schema(minimum = 0)]
    pub team_imbalance: f64,
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
    pub created_at: String,
}
