//! The messages of a search, as the game client receives them: the
//! WebSocket's JSON text messages, and the same events derived from REST
//! polling. Tagged by `type`; fields are camelCase on the wire.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One message of a search. Messages this SDK does not know (a newer
/// server) arrive as [`SearchMessage::Unknown`] with their JSON, never as
/// an error, and leave the search running.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchMessage {
    /// The search started (first message).
    Searching {
        /// `tkt_…` id.
        ticket_id: String,
        /// The game mode's name.
        game_mode: String,
        /// When the search started (RFC 3339); a requeued search keeps its first.
        queued_at: String,
    },
    /// Still waiting; sent when the waiting reason or the ping changes.
    Status(Status),
    /// A match proposal to accept or decline before `accept_by` (modes with acceptance).
    Proposed(Proposal),
    /// Back in the pool (a proposal dissolved by someone else, or a release);
    /// the usual status messages follow.
    Requeued {
        /// `mat_…` of the proposal or match that ended, when the message
        /// names it (a WebSocket's does; one derived from REST polling
        /// does not).
        match_id: Option<String>,
    },
    /// Matched. Final unless the mode waits for an assignment, in which
    /// case `assigned` or `assignment_timeout` follows.
    Matched {
        /// The player's view of the match: `matchId`, `teams`, `player`, `region`, `quality`.
        match_: Value,
    },
    /// Where to play: final.
    Assigned {
        /// The game server's address, e.g. `203.0.113.7:7777`.
        connection: String,
        /// The match's data with this player's own merged over it.
        data: Value,
    },
    /// No assignment came in time; the match is released and a still-connected
    /// client is `requeued` next.
    AssignmentTimeout,
    /// Failed with a code, e.g. `MATCH_DECLINED`: final.
    Failed {
        /// The machine-readable code.
        code: String,
        /// A human-readable explanation.
        message: String,
    },
    /// Cancelled by the client or the studio: final.
    Cancelled,
    /// Expired: final.
    Expired {
        /// `TICKET_TTL`, `REST_POLL_LAPSED`, `PONG_TIMEOUT`, `SOCKET_LAPSED` or
        /// `SEARCH_LOST`, when known.
        reason: Option<String>,
    },
    /// A message this SDK does not know, as received.
    Unknown(Value),
}

/// A `status` message.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Seconds since the search started.
    #[serde(default)]
    pub wait_seconds: f64,
    /// Median of the last five round trips (ms), once measured.
    #[serde(default)]
    pub ping_ms: Option<f64>,
    /// The last cycle's reason for waiting (`{"code": …}`), once a cycle saw the search.
    #[serde(default)]
    pub waiting_reason: Option<Value>,
    /// Seats of the largest in-range group the last cycle found, when sent.
    #[serde(default)]
    pub found: Option<u32>,
    /// Seats of the smallest match the wait allows now, when sent.
    #[serde(default)]
    pub needed: Option<u32>,
    /// In a mode with `composition`: the median wait (seconds) of the
    /// players matched in each role the ticket listed, over the last 15
    /// minutes; a role nobody was matched in is left out (docs/rules.md,
    /// "Role waits").
    #[serde(default)]
    pub role_waits: Option<BTreeMap<String, f64>>,
}

/// A `proposed` message (or a polled ticket's `proposal`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    /// `mat_…` of the proposed match.
    pub match_id: String,
    /// Answer before this instant (RFC 3339).
    pub accept_by: String,
    /// The teams as player ids, when sent.
    #[serde(default)]
    pub teams: Option<Value>,
    /// Tickets that accepted so far (polled status only).
    #[serde(default)]
    pub accepted: Option<Vec<String>>,
    /// The whole message or proposal as received.
    #[serde(skip)]
    pub raw: Value,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Known {
    #[serde(rename_all = "camelCase")]
    Searching {
        ticket_id: String,
        game_mode: String,
        queued_at: String,
    },
    Status(Status),
    Proposed(Proposal),
    Requeued {
        #[serde(rename = "matchId", default)]
        match_id: Option<String>,
    },
    Matched {
        #[serde(rename = "match")]
        match_: Value,
    },
    Assigned {
        connection: String,
        #[serde(default)]
        data: Value,
    },
    AssignmentTimeout,
    Failed {
        code: String,
        #[serde(default)]
        message: String,
    },
    Cancelled,
    Expired {
        #[serde(default)]
        reason: Option<String>,
    },
}

impl SearchMessage {
    /// The message a JSON text stands for; text that is not JSON becomes
    /// `Unknown` with the text as a JSON string.
    pub fn parse(text: &str) -> Self {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Self::from_value(value),
            Err(_) => SearchMessage::Unknown(Value::String(text.to_owned())),
        }
    }

    /// The message a JSON value stands for (`Unknown` when not one this SDK knows).
    pub fn from_value(value: Value) -> Self {
        let Ok(known) = serde_json::from_value::<Known>(value.clone()) else {
            return SearchMessage::Unknown(value);
        };
        match known {
            Known::Searching {
                ticket_id,
                game_mode,
                queued_at,
            } => SearchMessage::Searching {
                ticket_id,
                game_mode,
                queued_at,
            },
            Known::Status(s) => SearchMessage::Status(s),
            Known::Proposed(mut p) => {
                p.raw = value;
                SearchMessage::Proposed(p)
            }
            Known::Requeued { match_id } => SearchMessage::Requeued { match_id },
            Known::Matched { match_ } => SearchMessage::Matched { match_ },
            Known::Assigned { connection, data } => SearchMessage::Assigned { connection, data },
            Known::AssignmentTimeout => SearchMessage::AssignmentTimeout,
            Known::Failed { code, message } => SearchMessage::Failed { code, message },
            Known::Cancelled => SearchMessage::Cancelled,
            Known::Expired { reason } => SearchMessage::Expired { reason },
        }
    }

    /// The `type` on the wire (`"unknown"` for an unknown message without one).
    pub fn kind(&self) -> &str {
        match self {
            SearchMessage::Searching { .. } => "searching",
            SearchMessage::Status(_) => "status",
            SearchMessage::Proposed(_) => "proposed",
            SearchMessage::Requeued { .. } => "requeued",
            SearchMessage::Matched { .. } => "matched",
            SearchMessage::Assigned { .. } => "assigned",
            SearchMessage::AssignmentTimeout => "assignment_timeout",
            SearchMessage::Failed { .. } => "failed",
            SearchMessage::Cancelled => "cancelled",
            SearchMessage::Expired { .. } => "expired",
            SearchMessage::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// Whether nothing follows this message (`matched` is final only when
    /// the mode does not wait for an assignment: the server then closes).
    pub fn ends_search(&self) -> bool {
        matches!(
            self,
            SearchMessage::Assigned { .. }
                | SearchMessage::Failed { .. }
                | SearchMessage::Cancelled
                | SearchMessage::Expired { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_protocol_message_parses() {
        let cases = [
            (
                json!({"type":"searching","ticketId":"tkt_1","gameMode":"duel","queuedAt":"t"}),
                "searching",
            ),
            (
                json!({"type":"status","waitSeconds":1.5,"pingMs":null,"waitingReason":{"code":"NO_CANDIDATES"},"found":1,"needed":2}),
                "status",
            ),
            (
                json!({"type":"proposed","matchId":"mat_1","acceptBy":"t","teams":[["a"],["b"]]}),
                "proposed",
            ),
            (json!({"type":"requeued"}), "requeued"),
            (
                json!({"type":"matched","match":{"matchId":"mat_1"}}),
                "matched",
            ),
            (
                json!({"type":"assigned","connection":"203.0.113.7:7777","data":{"k":1}}),
                "assigned",
            ),
            (json!({"type":"assignment_timeout"}), "assignment_timeout"),
            (
                json!({"type":"failed","code":"MATCH_DECLINED","message":"m"}),
                "failed",
            ),
            (json!({"type":"cancelled"}), "cancelled"),
            (json!({"type":"expired","reason":"TICKET_TTL"}), "expired"),
        ];
        for (value, kind) in cases {
            let message = SearchMessage::parse(&value.to_string());
            assert_eq!(message.kind(), kind);
            assert!(!matches!(message, SearchMessage::Unknown(_)), "{value}");
        }
        let SearchMessage::Status(s) =
            SearchMessage::parse(r#"{"type":"status","waitSeconds":2,"found":3,"needed":4}"#)
        else {
            panic!()
        };
        assert_eq!((s.found, s.needed), (Some(3), Some(4)));
        let SearchMessage::Status(s) = SearchMessage::parse(
            r#"{"type":"status","waitSeconds":2,"roleWaits":{"tank":20.5,"damage":184}}"#,
        ) else {
            panic!()
        };
        let waits = s.role_waits.unwrap_or_default();
        assert_eq!((waits["tank"], waits["damage"]), (20.5, 184.0));
        // A socket's `requeued` names the proposal or match that ended.
        assert_eq!(
            SearchMessage::parse(r#"{"type":"requeued","matchId":"mat_1"}"#),
            SearchMessage::Requeued {
                match_id: Some("mat_1".to_owned())
            }
        );
    }

    #[test]
    fn unknown_messages_are_kept_raw() {
        let m = SearchMessage::parse(r#"{"type":"backfill_offer","seat":3}"#);
        assert_eq!(
            m,
            SearchMessage::Unknown(json!({"type":"backfill_offer","seat":3}))
        );
        assert_eq!(m.kind(), "backfill_offer");
        assert!(!m.ends_search());
        assert!(matches!(
            SearchMessage::parse("not json"),
            SearchMessage::Unknown(_)
        ));
    }
}
