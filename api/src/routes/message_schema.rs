//! OpenAPI schemas of the WebSocket search's text messages (SPEC 4).
//!
//! The socket sends the store's `StatusMessage` as JSON; the store knows
//! nothing of OpenAPI, so these types describe the same JSON for the
//! document (component `SearchMessage`). A test validates every variant
//! the store serialises against this schema, so they cannot drift.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// One text message of `GET /v1/search`, by `type`: `searching` first,
/// `status` whenever the waiting reason or the ping changes, then one
/// final message (`matched`, `failed`, `cancelled`, `expired`) before the
/// server closes the socket with 1000.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
#[schema(example = json!({"type": "searching", "ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "gameMode": "duel", "queuedAt": "2026-12-01T10:00:00.000Z"}))]
pub enum SearchMessage {
    /// The search started.
    #[serde(rename_all = "camelCase")]
    Searching {
        /// `tkt_…` id.
        ticket_id: String,
        /// The game mode's name.
        game_mode: String,
        /// When the search started (RFC 3339).
        queued_at: String,
    },
    /// The search is still waiting.
    #[serde(rename_all = "camelCase")]
    Status {
        /// Seconds since the search started.
        #[schema(minimum = 0)]
        wait_seconds: f64,
        /// Median of the last five round trips (milliseconds), once measured.
        #[schema(minimum = 0)]
        ping_ms: Option<f64>,
        /// The last cycle's reason for waiting (`{"code": …}`), once a
        /// cycle saw the search.
        #[schema(value_type = Option<Object>)]
        waiting_reason: Option<Value>,
        /// Seats of the largest in-range group the last cycle built around
        /// or with this search; absent before a cycle saw it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(minimum = 0)]
        found: Option<u32>,
        /// Seats of the smallest match the search's wait allows now (a
        /// relaxed shape, `bots.minHumans`, a settled flexible shape's
        /// `minTeams × min`); absent before a cycle saw it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(minimum = 1)]
        needed: Option<u32>,
    },
    /// Matched: final.
    Matched {
        /// The match.
        #[serde(rename = "match")]
        match_: PlayerMatch,
    },
    /// Failed with a code, e.g. `GAME_MODE_DISABLED`: final.
    Failed {
        /// The machine-readable code.
        code: String,
        /// A human-readable explanation.
        message: String,
    },
    /// Cancelled by the client or the studio: final.
    Cancelled,
    /// Expired (the ticket's lifetime ran out): final.
    Expired,
}

/// The match a `matched` message (and a matched ticket's status)
/// carries: at least its id; the teams, the player's own entry, the
/// region and the quality where the match has them.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0"}))]
pub struct PlayerMatch {
    /// `mat_…`.
    pub match_id: String,
}
