//! The webhook event types: one enum, written once, that the bodies
//! ([`crate::Event`]'s `type`), the deliveries log
//! (`webhook_deliveries.event_type`), the deliveries' `?eventType=` filter
//! and the OpenAPI document's webhooks all take their names from.

use serde::{Deserialize, Serialize};

/// A webhook event's type, as its body's `type` and the deliveries log
/// write it (`"match.made"`, `"match.backfilled"`, `"webhook.test"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventType {
    /// `match.made`: a match was formed and recorded
    /// (docs/webhook-events.md).
    #[serde(rename = "match.made")]
    MatchMade,
    /// `match.backfilled`: a backfill fill seated new players in a running
    /// match (docs/backfill.md).
    #[serde(rename = "match.backfilled")]
    MatchBackfilled,
    /// `webhook.test`: a test event, sent on demand (docs/webhooks.md).
    #[serde(rename = "webhook.test")]
    WebhookTest,
}

impl EventType {
    /// Every event type, in the order the docs list them.
    pub const ALL: [EventType; 3] = [
        EventType::MatchMade,
        EventType::MatchBackfilled,
        EventType::WebhookTest,
    ];

    /// The type as written in bodies and stored rows, e.g. `"match.made"`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::MatchMade => "match.made",
            EventType::MatchBackfilled => "match.backfilled",
            EventType::WebhookTest => "webhook.test",
        }
    }

    /// The event type a stored row names, or `None` for a name no event
    /// has.
    pub fn parse(name: &str) -> Option<EventType> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::EventType;

    /// serde's names are `as_str`'s: a body's `type` and a stored row's
    /// `event_type` can never disagree.
    #[test]
    fn serde_names_are_the_stored_names() {
        for t in EventType::ALL {
            assert_eq!(
                serde_json::to_string(&t).unwrap_or_default(),
                format!("\"{}\"", t.as_str())
            );
            assert_eq!(EventType::parse(t.as_str()), Some(t));
        }
        assert_eq!(EventType::parse("match.unknown"), None);
    }
}
