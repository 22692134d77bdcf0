//! The messages a searching client receives (docs/searching.md), as JSON text: the one
//! protocol of a ticket's status channel, published by the worker
//! (`matched`, `failed`, `expired`) and the API (`cancelled`, `expired`)
//! with [`publish`], read back by the API's socket with
//! [`StatusMessage::from_json`].

use crate::pool::PoolStore;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a search's WebSocket, and what is published on a ticket's
/// status channel (`StatusBus::publish_status`). Tagged by `type`:
/// `{"type":"searching",…}`, `{"type":"status",…}`, then one of
/// `{"type":"matched","match":{…}}`, `{"type":"failed","code":…,"message":…}`,
/// `{"type":"cancelled"}`, `{"type":"expired","reason":…}`.
///
/// In the OpenAPI document (component `SearchMessage`) every variant but
/// `released`, which is never sent to a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SearchMessage, example = json!({"type": "searching",
    "ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "gameMode": "duel",
    "queuedAt": "2026-12-01T10:00:00.000Z"})))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum StatusMessage {
    /// The search started.
    #[serde(rename_all = "camelCase")]
    Searching {
        /// `tkt_…` id.
        ticket_id: String,
        /// The game mode's name.
        game_mode: String,
        /// When the search started (RFC 3339).
        #[cfg_attr(feature = "openapi", schema(format = DateTime))]
        queued_at: String,
    },
    /// The search is still waiting; sent when `waitingReason` or `pingMs`
    /// changes.
    #[serde(rename_all = "camelCase")]
    Status {
        /// Seconds since the search started, to the millisecond.
        #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
        #[cfg_attr(feature = "openapi", schema(minimum = 0))]
        wait_seconds: f64,
        /// Median of the last five round trips (milliseconds), once measured.
        #[cfg_attr(feature = "openapi", schema(minimum = 0))]
        ping_ms: Option<f64>,
        /// The last cycle's reason (docs/game-modes.md#why-a-player-is-still-waiting), once a cycle saw the search.
        #[cfg_attr(feature = "openapi", schema(value_type = Option<matchplane_matchmaker::reasons::SearchWaitingReason>))]
        waiting_reason: Option<Value>,
        /// Seats of the largest in-range group the last cycle built around
        /// or with the search (docs/searching.md#statuses); absent before a cycle saw it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(minimum = 0))]
        found: Option<u32>,
        /// Seats of the smallest match its wait allows now (docs/searching.md#statuses).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(minimum = 1))]
        needed: Option<u32>,
        /// In a mode with `composition` (docs/rules.md, "Role waits"): for
        /// each role the ticket listed, the median wait (seconds) of the
        /// players matched in that role over the last 15 minutes; roles
        /// without matches in that window left out. Absent without
        /// `composition`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(nullable = false, example = json!({"tank": 20.5, "damage": 184.0})))]
        role_waits: Option<std::collections::BTreeMap<String, f64>>,
    },
    /// Matched: final.
    Matched {
        /// The match as its player sees it (at least `matchId`; the worker
        /// sends its teams), kept as JSON text so the ticket's `data` in it
        /// reaches the client byte for byte.
        #[serde(rename = "match")]
        #[cfg_attr(feature = "openapi", schema(schema_with = player_match_ref))]
        match_: matchplane_matchmaker::RawJson,
    },
    /// Failed with a documented code: final.
    Failed {
        /// The error code, e.g. `GAME_MODE_DISABLED`.
        code: String,
        /// A human-readable explanation.
        message: String,
    },
    /// Cancelled by the client or the studio: final.
    Cancelled,
    /// Expired (ticket expiry, a REST search not polled, a socket that
    /// stopped answering pings): final.
    Expired {
        /// Why, when known: `TICKET_TTL`, `REST_POLL_LAPSED`, `PONG_TIMEOUT`,
        /// `SOCKET_LAPSED`, `SEARCH_LOST`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<ExpiredReason>, nullable = false))]
        reason: Option<String>,
    },
    /// A match is proposed (acceptance): answer `accept` or `decline`
    /// before `acceptBy`. Not final.
    #[serde(rename_all = "camelCase")]
    Proposed {
        /// `mat_…` id of the proposal (the match's id once made).
        match_id: String,
        /// The deadline (RFC 3339).
        #[cfg_attr(feature = "openapi", schema(format = DateTime))]
        accept_by: String,
        /// Seconds left to answer when sent.
        #[cfg_attr(feature = "openapi", schema(minimum = 0))]
        accept_in_seconds: f64,
        /// The teams, as player ids.
        teams: Vec<Vec<String>>,
        /// What every player agreed on under the mode's rules
        /// (docs/rules.md), by attribute; absent without rules.
        #[serde(
            default,
            skip_serializing_if = "matchplane_matchmaker::rules::DeclaredValues::is_empty"
        )]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false))]
        attributes: matchplane_matchmaker::rules::DeclaredValues,
    },
    /// The proposal was cancelled by someone else, or the match was
    /// released (by the studio, or no assignment in time) while the socket
    /// was open: searching again, with the wait (and so the widened range)
    /// kept. Not final.
    #[serde(rename_all = "camelCase")]
    Requeued {
        /// `mat_…` id of the proposal (or the match) that ended: a socket
        /// says only the `requeued` of the proposal it last said. Absent
        /// from servers older than this field.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(nullable = false))]
        match_id: Option<String>,
    },
    /// Where to play (assignment, docs/acceptance.md): the match's `data` with the
    /// player's own merged over it. Final.
    Assigned {
        /// Where to connect (at most 512 bytes).
        connection: String,
        /// The player's data (a JSON object).
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        data: Value,
    },
    /// No assignment within the mode's `waitSeconds`: the match is
    /// `unassigned` (released). Not final: a socket still open searches
    /// again (`requeued`). `{"type":"assignment_timeout"}`.
    #[serde(rename = "assignment_timeout")]
    AssignmentTimeout,
    /// The studio released the match (published to the sockets waiting
    /// for its assignment, which search again and tell their clients
    /// `requeued`; never sent to a client as it is). Not final.
    Released,
}

/// Why a search expired: the values of an `expired` message's (and an
/// expired ticket's) `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExpiredReason {
    /// The ticket's lifetime ran out.
    TicketTtl,
    /// A REST search was not polled in time.
    RestPollLapsed,
    /// A socket stopped answering pings.
    PongTimeout,
    /// The API instance holding the search's socket stopped without ending
    /// it (a crash): the socket's lease on the search lapsed.
    SocketLapsed,
    /// The pool lost the search with its data: search again, with the same
    /// ticket while the store still holds it, else with a new one.
    SearchLost,
}

/// The schema of a `matched` message's `match`: the webhook crate's
/// `PlayerMatch` (the API registers it).
#[cfg(feature = "openapi")]
fn player_match_ref() -> utoipa::openapi::Ref {
    utoipa::openapi::Ref::from_schema_name("PlayerMatch")
}

impl StatusMessage {
    /// Whether the search is over after this message.
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            StatusMessage::Searching { .. }
                | StatusMessage::Status { .. }
                | StatusMessage::Proposed { .. }
                | StatusMessage::Requeued { .. }
                | StatusMessage::AssignmentTimeout
                | StatusMessage::Released
        )
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// The message `json` carries; `None` for text that is not a message.
    ///
    /// A `matched` message is read on its own path: a tagged enum buffers
    /// its fields, which a [`matchplane_matchmaker::RawJson`] (the match's
    /// exact text) cannot be read from.
    pub fn from_json(json: &str) -> Option<Self> {
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        #[derive(Deserialize)]
        struct MatchedWire {
            #[serde(rename = "match")]
            match_: matchplane_matchmaker::RawJson,
        }
        let kind: Kind<'_> = serde_json::from_str(json).ok()?;
        if kind.kind == "matched" {
            let wire: MatchedWire = serde_json::from_str(json).ok()?;
            return Some(Self::Matched {
                match_: wire.match_,
            });
        }
        serde_json::from_str(json).ok()
    }
}

/// Publishes `message` to `ticket_id`'s subscribers. Fire and forget: a
/// failure is logged, not returned (a client that was not listening reads
/// the search's state when it subscribes, and a socket re-reads it every
/// second).
pub async fn publish(pool: &dyn PoolStore, ticket_id: &str, message: &StatusMessage) {
    if let Err(error) = pool.publish_status(ticket_id, &message.to_json()).await {
        tracing::warn!(%error, ticket_id, "status publish failed");
    }
}

#[cfg(test)]
mod tests {
    use super::StatusMessage;

    #[test]
    fn every_message_reads_back_as_written() {
        let matched = StatusMessage::Matched {
            match_: matchplane_matchmaker::RawJson::from_text(
                r#"{"matchId":"mat_1","player":{"data":{"z": 1,"a":1.50}}}"#,
            )
            .unwrap(),
        };
        let messages = [
            matched,
            StatusMessage::Cancelled,
            StatusMessage::Expired {
                reason: Some("TICKET_TTL".into()),
            },
            StatusMessage::Failed {
                code: "GAME_MODE_DISABLED".into(),
                message: "off".into(),
            },
            StatusMessage::Assigned {
                connection: "203.0.113.7:7777".into(),
                data: serde_json::json!({"seat": 1}),
            },
            StatusMessage::AssignmentTimeout,
            StatusMessage::Released,
            StatusMessage::Searching {
                ticket_id: "tkt_1".into(),
                game_mode: "duel".into(),
                queued_at: "2026-12-01T10:00:00.000Z".into(),
            },
        ];
        for message in messages {
            let json = message.to_json();
            assert_eq!(StatusMessage::from_json(&json), Some(message), "{json}");
        }
        assert_eq!(StatusMessage::from_json("{\"type\":\"nope\"}"), None);
        assert_eq!(StatusMessage::from_json("not json"), None);
    }
}
