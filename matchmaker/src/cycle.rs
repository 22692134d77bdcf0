//! One matchmaking cycle over a mode's pool (SPEC 5): the single entry point
//! the worker and the simulator both call.

use crate::candidate::{build_candidates, Candidate};
use crate::config::{Algorithm, GameModeConfig, TeamAssignment};
use crate::grouping::{group_by_closeness, group_fifo, Grouping};
use crate::reasons::WaitingReason;
use crate::recheck::{recheck, FailedSearch};
use crate::search::Search;
use crate::teams::{self, Unit};
use crate::tolerance::mmr_range;
use arcstr::ArcStr;
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// A player seated in a proposed match (SPEC 6's `teams[].players[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedPlayer {
    /// The studio's player id.
    pub player_id: ArcStr,
    /// The ticket whose search is matched.
    pub ticket_id: ArcStr,
    /// The party id, `null` for a solo.
    pub party_id: Option<ArcStr>,
    /// The ticket's MMR, if any.
    pub mmr: Option<f64>,
    /// The search's ping (milliseconds), if measured.
    pub ping_ms: Option<f64>,
    /// Seconds from the search's `queuedAt` to the cycle's `now`.
    pub wait_seconds: f64,
}

/// One team of a proposed match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedTeam {
    /// Position in the match shape.
    pub index: usize,
    /// Exactly `matchShape[index]` players.
    pub players: Vec<MatchedPlayer>,
    /// Mean MMR of the players that carry one; `null` if none does.
    pub mean_mmr: Option<f64>,
}

/// A match the cycle formed, not yet claimed (SPEC 5.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedMatch {
    /// Teams in shape order.
    pub teams: Vec<ProposedTeam>,
    /// Max minus min player MMR (0 without MMRs), SPEC 8.
    pub mmr_spread: f64,
    /// Max minus min team mean MMR (0 without MMRs), SPEC 8.
    pub team_imbalance: f64,
}

impl ProposedMatch {
    /// Ticket ids of every player, team by team: what the claim takes.
    pub fn ticket_ids(&self) -> Vec<&str> {
        self.teams
            .iter()
            .flat_map(|t| t.players.iter().map(|p| p.ticket_id.as_str()))
            .collect()
    }
}

/// A search left in the pool, and why (SPEC 5.9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingSearch {
    /// The waiting ticket.
    pub ticket_id: ArcStr,
    /// Its player.
    pub player_id: ArcStr,
    /// Why nobody was found this cycle.
    pub reason: WaitingReason,
}

/// Everything one cycle decided.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleOutcome {
    /// Matches formed, to be claimed atomically by the caller.
    pub matches: Vec<ProposedMatch>,
    /// Searches the current config rules out (SPEC 3, "Config changes").
    pub failed: Vec<FailedSearch>,
    /// Searches left waiting, each with its reason.
    pub waiting: Vec<WaitingSearch>,
    /// Searches in the pool handed in.
    pub pool_size: usize,
    /// Candidates (complete, eligible parties) of this cycle.
    pub candidates: usize,
}

/// Runs one cycle of `config` over `pool` at time `now` (seconds, on the
/// pool's `queuedAt` clock). `rng` is only used by FIFO to shuffle groups.
///
/// Steps (SPEC 5): re-check the pool against the config, build candidates,
/// group them by the mode's algorithm, seat each group into teams. Never
/// panics on any pool; an empty pool gives an empty outcome.
pub fn run_cycle(
    config: &GameModeConfig,
    pool: &[Search],
    now: f64,
    rng: &mut dyn RngCore,
) -> CycleOutcome {
    let (valid, failed) = recheck(config, pool);
    let set = build_candidates(config, pool, &valid);
    let candidates = &set.candidates;
    let caps = &config.match_shape;
    let keep_together = config.parties.keep_together;

    let grouping = match &config.algorithm {
        Algorithm::Mmr {
            min_mmr,
            max_mmr,
            base_tolerance,
            expansion_multiplier,
        } => {
            let values: Vec<f64> = candidates.iter().map(|c| c.mmr.unwrap_or(0.0)).collect();
            let ranges: Vec<f64> = candidates
                .iter()
                .map(|c| {
                    mmr_range(
                        *min_mmr,
                        *max_mmr,
                        *base_tolerance,
                        *expansion_multiplier,
                        now - c.wait_start,
                    )
                })
                .collect();
            group_by_closeness(candidates, &values, &ranges, caps, keep_together)
        }
        Algorithm::Ping { max_delta } => {
            let values: Vec<f64> = candidates
                .iter()
                .map(|c| c.ping_ms.unwrap_or(0.0))
                .collect();
            let ranges = vec![*max_delta; candidates.len()];
            group_by_closeness(candidates, &values, &ranges, caps, keep_together)
        }
        Algorithm::Fifo {} => group_fifo(candidates, caps, keep_together),
    };

    let mut outcome = CycleOutcome {
        failed,
        pool_size: pool.len(),
        candidates: candidates.len(),
        ..CycleOutcome::default()
    };
    let Grouping { groups, reasons } = grouping;
    for group in &groups {
        match seat_group(config, pool, candidates, group, now, rng) {
            Some(m) => outcome.matches.push(m),
            // Unreachable when grouping admitted the group; kept waiting, never lost.
            None => {
                for &c in group {
                    push_waiting(
                        &mut outcome,
                        pool,
                        &candidates[c],
                        WaitingReason::NoExactSeating,
                    );
                }
            }
        }
    }
    for (i, reason) in set.waiting {
        outcome.waiting.push(WaitingSearch {
            ticket_id: pool[i].ticket_id.clone(),
            player_id: pool[i].player_id.clone(),
            reason,
        });
    }
    for (c, reason) in reasons {
        push_waiting(&mut outcome, pool, &candidates[c], reason);
    }
    outcome
}

fn push_waiting(
    outcome: &mut CycleOutcome,
    pool: &[Search],
    candidate: &Candidate,
    reason: WaitingReason,
) {
    for &i in &candidate.searches {
        outcome.waiting.push(WaitingSearch {
            ticket_id: pool[i].ticket_id.clone(),
            player_id: pool[i].player_id.clone(),
            reason: reason.clone(),
        });
    }
}

/// Seats a full group into teams by the mode's rule (SPEC 5.6).
fn seat_group(
    config: &GameModeConfig,
    pool: &[Search],
    candidates: &[Candidate],
    group: &[usize],
    now: f64,
    rng: &mut dyn RngCore,
) -> Option<ProposedMatch> {
    // A unit is a whole party with keep-together, else a single player:
    // `unit_members[u]` is a slice of `flat` (pool indices).
    let flat: Vec<usize> = group
        .iter()
        .flat_map(|&c| candidates[c].searches.iter().copied())
        .collect();
    let mut unit_members: Vec<std::ops::Range<usize>> = Vec::with_capacity(flat.len());
    if config.parties.keep_together {
        let mut start = 0;
        for &c in group {
            let len = candidates[c].searches.len();
            unit_members.push(start..start + len);
            start += len;
        }
    } else {
        unit_members.extend((0..flat.len()).map(|i| i..i + 1));
    }
    let units: Vec<Unit> = unit_members
        .iter()
        .map(|r| Unit {
            seats: r.len() as u32,
            value_sum: flat[r.clone()]
                .iter()
                .map(|&i| pool[i].mmr.unwrap_or(0.0))
                .sum(),
        })
        .collect();
    let caps = &config.match_shape;
    let seating = match (&config.algorithm, config.team_assignment) {
        (Algorithm::Fifo {}, _) => teams::shuffled(&units, caps, rng)?,
        (_, TeamAssignment::Balanced) => teams::balanced(&units, caps)?,
        (_, TeamAssignment::Snake) => teams::snake(&units, caps)?,
    };

    let mut teams: Vec<ProposedTeam> = (0..caps.len())
        .map(|index| ProposedTeam {
            index,
            players: Vec::with_capacity(caps[index] as usize),
            mean_mmr: None,
        })
        .collect();
    for (members, &t) in unit_members.iter().zip(&seating) {
        for &i in &flat[members.clone()] {
            let s = &pool[i];
            teams[t].players.push(MatchedPlayer {
                player_id: s.player_id.clone(),
                ticket_id: s.ticket_id.clone(),
                party_id: s
                    .party
                    .as_ref()
                    .filter(|p| p.members.len() > 1)
                    .map(|p| p.id.clone()),
                mmr: s.mmr,
                ping_ms: s.ping_ms,
                wait_seconds: (now - s.queued_at).max(0.0),
            });
        }
    }
    let mut all = Vec::new();
    let mut means = Vec::new();
    for team in &mut teams {
        let mmrs: Vec<f64> = team.players.iter().filter_map(|p| p.mmr).collect();
        all.extend_from_slice(&mmrs);
        if !mmrs.is_empty() {
            let mean = mmrs.iter().sum::<f64>() / mmrs.len() as f64;
            team.mean_mmr = Some(mean);
            means.push(mean);
        }
    }
    Some(ProposedMatch {
        teams,
        mmr_spread: range_of(&all),
        team_imbalance: range_of(&means),
    })
}

fn range_of(values: &[f64]) -> f64 {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() {
        hi - lo
    } else {
        0.0
    }
}
