//! A search waiting in a mode's pool: what the cycle sees of a player.

use arcstr::ArcStr;
use serde::{Deserialize, Serialize};

/// A party as a ticket carries it (SPEC 4): every member's ticket holds the
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

/// One live search in a mode's pool (SPEC 4, 5.1).
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
    /// `attributes.latencies` of the ticket (SPEC 12), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latencies: Option<crate::latency::Latencies>,
    /// When this search started (seconds).
    pub queued_at: f64,
}

impl Search {
    /// The id of the party this search is seated with in a match: its
    /// party's, when that party has more than one member (a party of one
    /// seats as a solo); `None` otherwise.
    pub fn seated_party_id(&self) -> Option<ArcStr> {
        self.party
            .as_ref()
            .filter(|p| p.members.len() > 1)
            .map(|p| p.id.clone())
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
        }
    }
}
