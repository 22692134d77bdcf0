//! Candidates from searches (SPEC 5.1): the party is the unit.
//!
//! A party is a candidate only when every member has a live search in the
//! pool; its MMR is the members' mean, its ping the slowest member's, its
//! wait start the earliest member's. In a Ping mode a party with any member
//! not yet measured is not a candidate.

use crate::config::{Algorithm, GameModeConfig};
use crate::reasons::WaitingReason;
use crate::search::Search;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// Members of one candidate: indices into the pool slice. Inline up to
/// four, so solos and small parties cost no allocation.
pub type Members = SmallVec<[usize; 4]>;

/// One candidate of a cycle: a complete party (a solo is a party of one).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Indices into the pool slice, in the party's `members` order.
    pub searches: Members,
    /// Seats it takes (players).
    pub seats: u32,
    /// Mean MMR of the members that carry one; `None` if none does.
    pub mmr: Option<f64>,
    /// Slowest member's ping (milliseconds), if every member has one.
    pub ping_ms: Option<f64>,
    /// Earliest member's `queuedAt` (seconds); equal ones are ordered by
    /// the pool position of the first member.
    pub wait_start: f64,
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

fn is_party(search: &Search) -> bool {
    search.party.as_ref().is_some_and(|p| p.members.len() > 1)
}

/// Builds candidates from the pool searches at `valid` (indices into `pool`,
/// already re-checked against `config`).
pub fn build_candidates(config: &GameModeConfig, pool: &[Search], valid: &[usize]) -> CandidateSet {
    let is_ping = matches!(config.algorithm, Algorithm::Ping { .. });
    let mut set = CandidateSet::default();
    // Every candidate's sort key: (wait start, tie, source), where a source
    // below `pool.len()` is a solo's pool index and any other one a party
    // of `parties_built`. Candidates are made once, in their final order:
    // sorting fat candidates (or moving them into place afterwards) read
    // and wrote each one at a random place, which on a pool larger than
    // the caches cost more than the rest of this step.
    let mut keys: Vec<(u64, usize, usize)> = Vec::with_capacity(valid.len());
    let mut parties_built: Vec<Option<Candidate>> = Vec::new();

    // Party searches by party id and by player; solos need no lookup.
    let mut parties: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    let mut party_order: Vec<&str> = Vec::new();
    let mut by_player: FxHashMap<&str, usize> = FxHashMap::default();
    for &i in valid {
        let search = &pool[i];
        match &search.party {
            Some(p) if p.members.len() > 1 => {
                by_player.insert(&search.player_id, i);
                let entry = parties.entry(p.id.as_str()).or_default();
                if entry.is_empty() {
                    party_order.push(p.id.as_str());
                }
                entry.push(i);
            }
            _ if is_ping && search.ping_ms.is_none() => {
                set.waiting.push((i, WaitingReason::PingNotMeasured));
            }
            _ => keys.push((order_key(f64::INFINITY.min(search.queued_at)), i, i)),
        }
    }

    for key in party_order {
        let present = &parties[key];
        let Some(party) = pool[present[0]].party.as_ref() else {
            continue;
        };
        let mut members = Members::with_capacity(party.members.len());
        let mut missing = Vec::new();
        for m in &party.members {
            match by_player.get(m.as_str()) {
                Some(&idx)
                    if is_party(&pool[idx])
                        && pool[idx].party.as_ref().map(|p| p.id.as_str()) == Some(key) =>
                {
                    members.push(idx)
                }
                _ => missing.push(m.clone()),
            }
        }
        if missing.is_empty() {
            if let Some(c) = set.party(is_ping, pool, members) {
                let tie = c.searches.first().copied().unwrap_or(usize::MAX);
                keys.push((
                    order_key(c.wait_start),
                    tie,
                    pool.len() + parties_built.len(),
                ));
                parties_built.push(Some(c));
            }
        } else {
            let reason = WaitingReason::PartyIncomplete { missing };
            set.waiting
                .extend(present.iter().map(|&i| (i, reason.clone())));
        }
    }

    // Longest-waiting first (SPEC 5.2), ties by pool position.
    keys.sort_unstable();
    set.candidates.reserve_exact(keys.len());
    for (_, _, source) in keys {
        let candidate = match pool.get(source) {
            Some(s) => Some(Candidate {
                searches: Members::from_elem(source, 1),
                seats: 1,
                mmr: s.mmr,
                ping_ms: s.ping_ms,
                wait_start: f64::INFINITY.min(s.queued_at),
            }),
            None => parties_built
                .get_mut(source - pool.len())
                .and_then(Option::take),
        };
        set.candidates.extend(candidate);
    }
    set
}

/// Key of an `f64` whose unsigned order is `f64::total_cmp`'s order.
pub(crate) fn order_key(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

impl CandidateSet {
    /// The candidate of the complete party `members`, or `None` with the
    /// reason recorded when it cannot be one yet (a Ping mode without every
    /// member's ping).
    fn party(&mut self, is_ping: bool, pool: &[Search], members: Members) -> Option<Candidate> {
        let mut ping = Some(f64::NEG_INFINITY);
        let (mut mmr_sum, mut mmr_count) = (0.0, 0u32);
        let mut wait_start = f64::INFINITY;
        for &i in &members {
            let s = &pool[i];
            ping = match (ping, s.ping_ms) {
                (Some(p), Some(q)) => Some(p.max(q)),
                _ => None,
            };
            if let Some(m) = s.mmr {
                mmr_sum += m;
                mmr_count += 1;
            }
            wait_start = wait_start.min(s.queued_at);
        }
        if is_ping && ping.is_none() {
            self.waiting
                .extend(members.iter().map(|&i| (i, WaitingReason::PingNotMeasured)));
            return None;
        }
        Some(Candidate {
            seats: members.len() as u32,
            searches: members,
            mmr: (mmr_count > 0).then(|| mmr_sum / f64::from(mmr_count)),
            ping_ms: ping,
            wait_start,
        })
    }
}
