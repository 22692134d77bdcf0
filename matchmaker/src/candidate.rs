//! Candidates from searches (SPEC 5.1): the party is the unit.
//!
//! A party is a candidate only when every member has a live search in the
//! pool; its MMR is the members' mean, its ping the slowest member's, its
//! wait start the earliest member's. In a Ping mode a party with any member
//! not yet measured is not a candidate.

use crate::config::{Algorithm, GameModeConfig};
use crate::reasons::WaitingReason;
use crate::search::Search;
use std::collections::HashMap;

/// One candidate of a cycle: a complete party (a solo is a party of one).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Indices into the pool slice, in the party's `members` order.
    pub searches: Vec<usize>,
    /// Seats it takes (players).
    pub seats: u32,
    /// Mean MMR of the members that carry one; `None` if none does.
    pub mmr: Option<f64>,
    /// Slowest member's ping (milliseconds), if every member has one.
    pub ping_ms: Option<f64>,
    /// Earliest member's `queuedAt` (seconds).
    pub wait_start: f64,
    /// Tie-break for equal wait starts: the first member's ticket id.
    pub tie: String,
}

/// The candidates of a pool, and the searches that cannot be candidates yet
/// with the reason.
#[derive(Debug, Clone, Default)]
pub struct CandidateSet {
    /// Complete, eligible parties, sorted longest-waiting first (SPEC 5.2).
    pub candidates: Vec<Candidate>,
    /// Pool indices of searches waiting for a reason decided before grouping.
    pub waiting: Vec<(usize, WaitingReason)>,
}

/// Builds candidates from the pool searches at `valid` (indices into `pool`,
/// already re-checked against `config`).
pub fn build_candidates(config: &GameModeConfig, pool: &[Search], valid: &[usize]) -> CandidateSet {
    // Group valid searches by party id; a solo is keyed by its own ticket.
    let mut by_party: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    let mut by_player: HashMap<&str, usize> = HashMap::with_capacity(valid.len());
    for &i in valid {
        let search = &pool[i];
        by_player.insert(&search.player_id, i);
        let key = match &search.party {
            Some(p) if p.members.len() > 1 => p.id.as_str(),
            _ => search.ticket_id.as_str(),
        };
        let entry = by_party.entry(key).or_default();
        if entry.is_empty() {
            order.push(key);
        }
        entry.push(i);
    }

    let is_ping = matches!(config.algorithm, Algorithm::Ping { .. });
    let mut set = CandidateSet::default();
    for key in order {
        let present = &by_party[key];
        let first = &pool[present[0]];
        let searches: Vec<usize> = match &first.party {
            Some(party) if party.members.len() > 1 => {
                let mut members = Vec::with_capacity(party.members.len());
                let mut missing = Vec::new();
                for m in &party.members {
                    match by_player.get(m.as_str()) {
                        Some(&idx)
                            if pool[idx].party.as_ref().map(|p| p.id.as_str()) == Some(key) =>
                        {
                            members.push(idx)
                        }
                        _ => missing.push(m.clone()),
                    }
                }
                if !missing.is_empty() {
                    let reason = WaitingReason::PartyIncomplete { missing };
                    set.waiting
                        .extend(present.iter().map(|&i| (i, reason.clone())));
                    continue;
                }
                members
            }
            _ => vec![present[0]],
        };

        let pings: Option<Vec<f64>> = searches.iter().map(|&i| pool[i].ping_ms).collect();
        let ping_ms = pings.map(|p| p.into_iter().fold(f64::NEG_INFINITY, f64::max));
        if is_ping && ping_ms.is_none() {
            set.waiting.extend(
                searches
                    .iter()
                    .map(|&i| (i, WaitingReason::PingNotMeasured)),
            );
            continue;
        }
        let mmrs: Vec<f64> = searches.iter().filter_map(|&i| pool[i].mmr).collect();
        let mmr = (!mmrs.is_empty()).then(|| mmrs.iter().sum::<f64>() / mmrs.len() as f64);
        let wait_start = searches
            .iter()
            .map(|&i| pool[i].queued_at)
            .fold(f64::INFINITY, f64::min);
        let tie = pool[searches[0]].ticket_id.clone();
        set.candidates.push(Candidate {
            seats: searches.len() as u32,
            searches,
            mmr,
            ping_ms,
            wait_start,
            tie,
        });
    }
    set.candidates.sort_by(|a, b| {
        a.wait_start
            .total_cmp(&b.wait_start)
            .then_with(|| a.tie.cmp(&b.tie))
    });
    set
}
