//! The simulation's output (docs/simulate.md).

use super::stats::{Percentiles, Spread};
use crate::reasons::WaitingStatus;
use serde::Serialize;
use std::collections::BTreeMap;

/// One match of the simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedMatch {
    /// Virtual time of the cycle that made it (seconds, written to the
    /// millisecond as every duration, docs/openapi.md).
    #[serde(serialize_with = "crate::timestamp::seconds")]
    pub at: f64,
    /// Player ids per team, in shape order; `null` for a bot seat.
    pub teams: Vec<Vec<Option<String>>>,
    /// Mean MMR per team (`null` for a team without MMRs).
    pub mean_mmr: Vec<Option<f64>>,
    /// Max minus min player MMR; `null` for a match without MMRs.
    pub mmr_spread: Option<f64>,
    /// Max minus min team mean MMR; `null` for a match without MMRs.
    pub team_imbalance: Option<f64>,
    /// Every seat: humans team by team, then each team's bot seats.
    pub players: Vec<SimulatedPlayer>,
    /// The shape used (players per team).
    pub match_shape: Vec<u32>,
    /// Seats open to backfill per team.
    pub seats_open: Vec<u32>,
    /// The region the match is played in (docs/regions.md); absent without `regions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// What every player agreed on under the mode's rules (docs/rules.md);
    /// absent without rules.
    #[serde(skip_serializing_if = "crate::rules::DeclaredValues::is_empty")]
    pub attributes: crate::rules::DeclaredValues,
}

/// One seat of a simulated match (docs/simulate.md's `players`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedPlayer {
    /// The player; `null` for a bot.
    pub player_id: Option<String>,
    /// Team index in shape order.
    pub team: usize,
    /// Whether the seat is a bot's.
    pub bot: bool,
    /// The player's MMR; a bot's is the humans' mean (`null` without MMRs).
    pub mmr: Option<f64>,
    /// With `regions`, the player's latency to the match's region; else
    /// its measured ping (milliseconds); `null` for bots and players
    /// without one.
    pub latency_ms: Option<f64>,
    /// The arrival's `data`, untouched; absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
    /// The player's role seat (docs/rules.md, "Role queues"); absent
    /// without `composition` and for bots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// The `stats` block of docs/simulate.md.
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
    /// Backfill figures; absent when no backfill opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill: Option<super::BackfillStats>,
    /// Acceptance figures (docs/acceptance.md); absent in a mode without `acceptance`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<super::AcceptanceStats>,
    /// Per role seated (docs/rules.md, "Role queues"): matches, players
    /// and their waits; absent in a mode without `composition`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, super::RoleStats>,
}

/// A failed or expired search of the simulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ended {
    /// The player.
    pub player_id: String,
    /// Virtual time it ended (seconds, to the millisecond).
    #[serde(serialize_with = "crate::timestamp::seconds")]
    pub at: f64,
    /// documented code (`failed`) or `EXPIRED`.
    pub code: String,
    /// What the config refused, for a search the re-check failed
    /// (`PARTY_ATTRIBUTES_DIFFER` names the attribute, as the live
    /// failure's message does); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Everything `matchplane simulate` prints (docs/simulate.md), plus the searches that
/// failed or expired and the arrivals refused because the player was
/// already searching.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Matches in the order made.
    pub matches: Vec<SimulatedMatch>,
    /// Players still waiting at `until`, in arrival order.
    pub unmatched: Vec<String>,
    /// Why each of them waits (the last cycle's reason, with `found` and
    /// `needed` beside its code).
    pub unmatched_reasons: BTreeMap<String, WaitingStatus>,
    /// Searches failed by the config or expired by `ticketTtlSeconds`.
    pub ended: Vec<Ended>,
    /// Arrivals of a player who already had a live search
    /// (`PLAYER_ALREADY_SEARCHING` in the product).
    pub refused_arrivals: usize,
    /// Arrivals after the last cycle (`until`, docs/simulate.md
    /// "Timing"): never simulated, so neither matched nor waiting; absent
    /// when there is none.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_simulated: usize,
    /// Backfills opened by `leave` events, with their fills.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub backfills: Vec<super::SimulatedBackfill>,
    /// Proposals (docs/acceptance.md, a mode with `acceptance`) with their outcome, in
    /// the order proposed; absent without acceptance.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proposals: Vec<super::SimulatedProposal>,
    /// Summary.
    pub stats: Stats,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
