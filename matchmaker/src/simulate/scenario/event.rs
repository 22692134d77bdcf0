//! One inline event of a scenario (docs/simulate.md, "Arrivals"): an
//! arrival, a cancel, a party member leaving, or holding matching; read as
//! written, then checked into an [`Event`].

use super::Event;
use crate::codes::Code;
use crate::search::Party;
use crate::validation::FieldError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// An event as a scenario writes it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct RawEvent {
    at: f64,
    #[serde(default)]
    player_id: Option<String>,
    #[serde(default)]
    mmr: Option<f64>,
    #[serde(default)]
    ping_ms: Option<f64>,
    #[serde(default)]
    party: Option<Party>,
    #[serde(default)]
    latencies: Option<serde_json::Value>,
    #[serde(default)]
    data: Option<serde_json::Value>,
    #[serde(default)]
    answer: Option<crate::simulate::proposals::SimAnswer>,
    #[serde(default)]
    cancel: Option<String>,
    #[serde(default)]
    leave: Option<Vec<String>>,
    /// As written: each value is checked against its declaration as a
    /// ticket's is ([`super::arrival_attributes::parse_arrival_attributes`]),
    /// so that a `null` is one failure among the others, in a ticket's words.
    #[serde(default)]
    attributes: BTreeMap<String, serde_json::Value>,
    hold: Option<bool>,
}

/// Why an inline event was refused.
pub(super) enum EventError {
    Shape(String),
    Fields(Vec<FieldError>),
}

/// Checks an arrival's `data` as a ticket's `attributes.data`
/// (docs/searching.md): an object of at most 4 KiB serialised.
///
/// # Errors
/// The failure on `data`.
fn check_data(data: &serde_json::Value) -> Result<(), FieldError> {
    let size = serde_json::to_string(data).map_or(usize::MAX, |s| s.len());
    if !data.is_object() || size > crate::attributes::MAX_DATA_BYTES {
        return Err(FieldError::new(
            "data",
            Code::ValidationError,
            "data must be a JSON object of at most 4096 bytes serialised",
        ));
    }
    Ok(())
}

impl RawEvent {
    /// The event, with an arrival's `attributes` as written (the event's
    /// own left empty, for the caller to parse against the modes).
    pub(super) fn into_event(
        self,
        regions: Option<&crate::latency::Regions>,
    ) -> Result<(Event, BTreeMap<String, serde_json::Value>), EventError> {
        let mut fields = Vec::new();
        let latencies = match self
            .latencies
            .as_ref()
            .map(|l| crate::latency::parse_latencies(l, regions))
        {
            Some(Ok(l)) => Some(l),
            Some(Err(e)) => {
                fields.extend(e.into_iter().map(super::as_arrival_field));
                None
            }
            None => None,
        };
        if let Some(Err(e)) = self.data.as_ref().map(check_data) {
            fields.push(e);
        }
        if let Some(answer) = &self.answer {
            if !answer.after.is_finite() || answer.after < 0.0 {
                fields.push(FieldError::new(
                    "answer.after",
                    Code::ValidationError,
                    "after is a number of seconds >= 0",
                ));
            }
        }
        if !fields.is_empty() {
            return Err(EventError::Fields(fields));
        }
        if let Some(held) = self.hold {
            if self.cancel.is_some() || self.player_id.is_some() || self.leave.is_some() {
                return Err(EventError::Shape(
                    "a hold event has only at and hold".into(),
                ));
            }
            return Ok((Event::Hold { at: self.at, held }, BTreeMap::new()));
        }
        if let Some(players) = self.leave {
            if self.cancel.is_some() || self.player_id.is_some() {
                return Err(EventError::Shape(
                    "a leave event has only at and leave".into(),
                ));
            }
            if players.is_empty() {
                // An empty leave does nothing: refused, as a typo is
                // (docs/simulate.md, "Inline events").
                return Err(EventError::Fields(vec![FieldError::new(
                    "leave",
                    Code::ValidationError,
                    "leave names at least one player",
                )]));
            }
            // A player named twice leaves once: the second is a typo.
            let repeated: Vec<FieldError> = players
                .iter()
                .enumerate()
                .filter(|(j, p)| players[..*j].contains(p))
                .map(|(j, p)| {
                    FieldError::new(
                        format!("leave[{j}]"),
                        Code::ValidationError,
                        format!("{p:?} is named twice"),
                    )
                })
                .collect();
            if !repeated.is_empty() {
                return Err(EventError::Fields(repeated));
            }
            let leave = Event::Leave {
                at: self.at,
                players,
            };
            return Ok((leave, BTreeMap::new()));
        }
        match (self.cancel, self.player_id) {
            (Some(player_id), None) => {
                let cancel = Event::Cancel {
                    at: self.at,
                    player_id,
                };
                Ok((cancel, BTreeMap::new()))
            }
            (None, Some(player_id)) => Ok((
                Event::Arrival {
                    at: self.at,
                    player_id,
                    mmr: self.mmr,
                    ping_ms: self.ping_ms,
                    party: self.party,
                    latencies,
                    data: self.data,
                    answer: self.answer,
                    attributes: crate::rules::DeclaredValues::new(),
                },
                self.attributes,
            )),
            // Neither kind, or both (docs/simulate.md, "Inline events").
            _ => Err(EventError::Shape(
                "an event has one of playerId (an arrival), cancel, leave or hold".into(),
            )),
        }
    }
}
