//! A search waiting in a mode's pool: what the cycle sees of a player.

use crate::attributes::Attributes;
use crate::rules::DeclaredValues;
use arcstr::ArcStr;
use serde::{Deserialize, Serialize};

/// A party as a ticket carries it (docs/searching.md): every member's ticket holds the
/// same object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Party {
    /// Studio-chosen party id, unique among the mode's live parties
    /// (reference-counted: every seated member's match entry shares it).
    pub id: ArcStr,
    /// Player ids of every member, the searching player included.
    pub members: Vec<String>,
}

/// One live search in a mode's pool (docs/searching.md, docs/game-modes.md#how-a-cycle-forms-matches).
///
/// Times are seconds on one clock shared with the `now` handed to
/// [`crate::run_cycle`] (the shell uses Unix seconds, the simulator virtual
/// seconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Search {
    /// `tkt_…` id of the ticket searching. Ids are reference-counted
    /// strings: a cycle's outcome shares them with the pool instead of
    /// copying 100 000 of them.
    pub ticket_id: ArcStr,
    /// The studio's player id.
    pub player_id: ArcStr,
    /// The party; `None` is a party of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub party: Option<Party>,
    /// `attributes.mmr` of the ticket, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmr: Option<f64>,
    /// Median of the last five round trips (milliseconds), once measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_ms: Option<f64>,
    /// `attributes.latencies` of the ticket (docs/regions.md), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latencies: Option<crate::latency::Latencies>,
    /// When this search started (seconds).
    pub queued_at: f64,
    /// The ticket's values of the mode's declared attributes
    /// (docs/rules.md), by name; empty in modes that declare none. Shared
    /// with the players of the matches it is seated in (see
    /// [`crate::rules::PlayerValues`]).
    #[serde(default, skip_serializing_if = "no_values")]
    pub attributes: std::sync::Arc<DeclaredValues>,
}

fn no_values(values: &std::sync::Arc<DeclaredValues>) -> bool {
    values.is_empty()
}

impl Search {
    /// The search of a ticket for `player_id` in `party` with `attributes`
    /// (their matching part: `mmr`, `latencies`), started at `queued_at`,
    /// its ping not yet measured. Every search of a ticket is built here
    /// (see [`SearchEntry`] for its pool entry's text).
    pub fn new(
        ticket_id: impl Into<ArcStr>,
        player_id: impl Into<ArcStr>,
        party: Option<Party>,
        attributes: &Attributes,
        queued_at: f64,
    ) -> Self {
        Self {
            ticket_id: ticket_id.into(),
            player_id: player_id.into(),
            party,
            mmr: attributes.mmr,
            ping_ms: None,
            latencies: attributes.latencies.clone(),
            queued_at,
            attributes: std::sync::Arc::new(attributes.declared.clone()),
        }
    }

    /// The id of the party this search is seated with in a match: its
    /// party's, when that party has more than one member (a party of one
    /// seats as a solo); `None` otherwise.
    pub fn seated_party_id(&self) -> Option<ArcStr> {
        self.party
            .as_ref()
            .filter(|p| p.members.len() > 1)
            .map(|p| p.id.clone())
    }

    /// Its party's size (1 for a solo): the seats its candidate takes.
    pub fn party_seats(&self) -> u32 {
        self.party.as_ref().map_or(1, |p| {
            u32::try_from(p.members.len()).unwrap_or(u32::MAX).max(1)
        })
    }

    /// A solo search with an MMR, the common case in tests and benchmarks.
    pub fn solo(
        ticket_id: impl Into<ArcStr>,
        player_id: impl Into<ArcStr>,
        mmr: f64,
        queued_at: f64,
    ) -> Self {
        Self {
            ticket_id: ticket_id.into(),
            player_id: player_id.into(),
            party: None,
            mmr: Some(mmr),
            ping_ms: None,
            latencies: None,
            queued_at,
            attributes: Default::default(),
        }
    }
}

/// The pool entry of a ticket's search before it starts: the JSON of its
/// [`Search::new`] without `queuedAt` (nor a ping), written once when the
/// ticket is generated. [`SearchEntry::started`] adds the start time.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchEntry<'a> {
    /// `tkt_…` id.
    pub ticket_id: &'a str,
    /// The studio's player id.
    pub player_id: &'a str,
    /// The party, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub party: Option<&'a Party>,
    /// `attributes.mmr`, as [`Search::new`] takes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mmr: Option<f64>,
    /// `attributes.latencies`, as [`Search::new`] takes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latencies: Option<&'a crate::latency::Latencies>,
    /// The declared attributes, as [`Search::new`] takes them.
    #[serde(skip_serializing_if = "crate::rules::DeclaredValues::is_empty")]
    pub attributes: &'a DeclaredValues,
}

impl<'a> SearchEntry<'a> {
    /// The entry of a ticket for `player_id` in `party` with `attributes`.
    pub fn new(
        ticket_id: &'a str,
        player_id: &'a str,
        party: Option<&'a Party>,
        attributes: &'a Attributes,
    ) -> Self {
        Self {
            ticket_id,
            player_id,
            party,
            mmr: attributes.mmr,
            latencies: attributes.latencies.as_ref(),
            attributes: &attributes.declared,
        }
    }

    /// The entry's JSON text (an object).
    ///
    /// # Errors
    /// Never for these plain fields; serde's error otherwise.
    pub fn to_text(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// The pool entry of the search whose not-yet-started entry is `text`
    /// ([`SearchEntry::to_text`]), started at `queued_at`: the text with
    /// `queuedAt` added as its last field, serde's number formatting kept.
    /// `None` if `text` is not a JSON object's text.
    pub fn started(text: &str, queued_at: f64) -> Option<String> {
        let head = text.trim_end().strip_suffix('}')?;
        if !text.trim_start().starts_with('{') || queued_at.is_nan() || queued_at.is_infinite() {
            return None;
        }
        let now = serde_json::to_string(&queued_at).ok()?;
        let empty = head.trim_end().ends_with('{');
        let mut entry = String::with_capacity(head.len() + now.len() + 14);
        entry.push_str(head);
        entry.push_str(if empty {
            "\"queuedAt\":"
        } else {
            ",\"queuedAt\":"
        });
        entry.push_str(&now);
        entry.push('}');
        Some(entry)
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;

    #[test]
    fn a_started_entry_is_the_search_new_builds() {
        let attributes: Attributes =
            serde_json::from_str(r#"{"mmr":1500.25,"latencies":{"eu-west":31},"data":{"k":1}}"#)
                .unwrap();
        let party = Party {
            id: "p1".into(),
            members: vec!["ana".into(), "ben".into()],
        };
        let text = SearchEntry::new("tkt_1", "ana", Some(&party), &attributes)
            .to_text()
            .unwrap();
        assert!(!text.contains("data"), "data is never in the pool: {text}");
        let started = SearchEntry::started(&text, 1_700_000_000.5).unwrap();
        assert_eq!(
            serde_json::from_str::<Search>(&started).unwrap(),
            Search::new("tkt_1", "ana", Some(party), &attributes, 1_700_000_000.5)
        );
        assert_eq!(
            SearchEntry::started("{}", 1.0).as_deref(),
            Some(r#"{"queuedAt":1.0}"#)
        );
        assert_eq!(SearchEntry::started("[1]", 1.0), None);
    }
}
