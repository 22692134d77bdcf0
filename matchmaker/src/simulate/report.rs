//! The simulation's output (SPEC 8).

use super::stats::{Percentiles, Spread};
use crate::reasons::WaitingReason;
use serde::Serialize;
use std::collections::BTreeMap;

/// One match of the simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedMatch {
    /// Virtual time of the cycle that made it (seconds).
    pub at: f64,
    /// Player ids per team, in shape order.
    pub teams: Vec<Vec<String>>,
    /// Mean MMR per team (`null` for a team without MMRs).
    pub mean_mmr: Vec<Option<f64>>,
    /// Max minus min player MMR.
    pub mmr_spread: f64,
    /// Max minus min team mean MMR.
    pub team_imbalance: f64,
}

/// The `stats` block of SPEC 8.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Matches made.
    pub matches: usize,
    /// Players in them.
    pub matched_players: usize,
    /// Searches still waiting at `until` (the players of `unmatched`).
    pub still_waiting: usize,
    /// Seconds from arrival to match, over matched players.
    pub wait_seconds: Percentiles,
    /// Seconds waited by every player: the matched ones' waits and, for
    /// those still waiting, their wait until `until` (censored there), so
    /// a config that strands players shows it.
    pub wait_seconds_all: Percentiles,
    /// Per match.
    pub mmr_spread: Spread,
    /// Per match.
    pub team_imbalance: Spread,
}

/// A failed or expired search of the simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ended {
    /// The player.
    pub player_id: String,
    /// Virtual time it ended (seconds).
    pub at: f64,
    /// SPEC code (`failed`) or `EXPIRED`.
    pub code: String,
}

/// Everything `matchplane simulate` prints (SPEC 8), plus the searches that
/// failed or expired and the arrivals refused because the player was
/// already searching.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Matches in the order made.
    pub matches: Vec<SimulatedMatch>,
    /// Players still waiting at `until`, in arrival order.
    pub unmatched: Vec<String>,
    /// Why each of them waits (the last cycle's reason).
    pub unmatched_reasons: BTreeMap<String, WaitingReason>,
    /// Searches failed by the config or expired by `ticketTtlSeconds`.
    pub ended: Vec<Ended>,
    /// Arrivals of a player who already had a live search
    /// (`PLAYER_ALREADY_SEARCHING` in the product).
    pub refused_arrivals: usize,
    /// Summary.
    pub stats: Stats,
}
