//! A ticket's status, as `GET /v1/searches/{ticketId}` (the game client)
//! and `GET …/tickets/{ticketId}` (the studio) answer it.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// Where a ticket stands. Fields a newer server adds stay readable in `raw`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TicketStatus {
    /// `tkt_…`.
    pub ticket_id: String,
    /// `created`, `searching`, `proposed`, `matched`, `released`,
    /// `cancelled`, `expired` or `failed`.
    pub status: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The studio's player id.
    pub player_id: String,
    /// When the last search started (RFC 3339), `None` before any.
    pub queued_at: Option<String>,
    /// Seconds waited in the current search, when searching.
    pub wait_seconds: Option<f64>,
    /// The last cycle's waiting reason, while searching.
    pub waiting_reason: Option<Value>,
    /// In a mode with `composition`, while searching: the median wait
    /// (seconds) of the players matched in each role the ticket listed.
    pub role_waits: Option<BTreeMap<String, f64>>,
    /// The proposal, while `proposed`.
    pub proposal: Option<Value>,
    /// The match, once matched.
    pub match_: Option<Value>,
    /// `Some(Value::Null)` while a matched ticket waits for its assignment,
    /// `Some(object)` once assigned, `None` in modes without assignment.
    pub assignment: Option<Value>,
    /// `{code, message}` once failed.
    pub error: Option<Value>,
    /// Why an expired search expired.
    pub reason: Option<String>,
    /// The whole body as received.
    pub raw: Value,
}

impl<'de> Deserialize<'de> for TicketStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(d)?;
        let text = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_owned);
        let some = |k: &str| raw.get(k).filter(|v| !v.is_null()).cloned();
        Ok(TicketStatus {
            ticket_id: text("ticketId").unwrap_or_default(),
            status: text("status").unwrap_or_default(),
            game_mode: text("gameMode").unwrap_or_default(),
            player_id: text("playerId").unwrap_or_default(),
            queued_at: text("queuedAt"),
            wait_seconds: raw.get("waitSeconds").and_then(Value::as_f64),
            waiting_reason: some("waitingReason"),
            role_waits: some("roleWaits").and_then(|w| serde_json::from_value(w).ok()),
            proposal: some("proposal"),
            match_: some("match"),
            assignment: raw.get("assignment").cloned(),
            error: some("error"),
            reason: text("reason"),
            raw,
        })
    }
}
