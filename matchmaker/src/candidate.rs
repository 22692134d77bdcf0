//! Candidates from searches (docs/game-modes.md#how-a-cycle-forms-matches): the party is the unit.
//!
//! A party is a candidate only when every member has a live search in the
//! pool; its MMR is the members' mean (or as `parties.mmr` says), its ping the slowest member's, its
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
    /// Earliest member's `queuedAt` (seconds).
    pub wait_start: f64,
    /// Tie-break for equal wait starts: pool position of the first member.
    pub tie: usize,
}

/// The candidates of a pool, and the searches that cannot be candidates yet
/// with the reason.
#[derive(Debug, Clone, Default)]
pub struct CandidateSet {
    /// Complete, eligible parties, sorted longest-waiting first (docs/game-modes.md#how-a-cycle-forms-matches).
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
    let party_mmr = config.parties.mmr;
    let mut set = CandidateSet::default();
    set.candidates.reserve(valid.len());

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
            _ => {
                let mut members = Members::new();
                members.push(i);
                set.push(is_ping, party_mmr, pool, members);
            }
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
            set.push(is_ping, party_mmr, pool, members);
        } else {
            let reason = WaitingReason::PartyIncomplete { missing };
            set.waiting
                .extend(present.iter().map(|&i| (i, reason.clone())));
        }
    }
    sort_longest_waiting_first(&mut set.candidates);
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

/// Sorts by wait start, ties by pool position: small keys are sorted and
/// the candidates moved once, instead of moving whole candidates at every
/// comparison.
fn sort_longest_waiting_first(candidates: &mut Vec<Candidate>) {
    let mut keys: Vec<(u64, usize, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (order_key(c.wait_start), c.tie, i))
        .collect();
    keys.sort_unstable();
    let mut slots: Vec<Option<Candidate>> =
        std::mem::take(candidates).into_iter().map(Some).collect();
    candidates.extend(keys.into_iter().filter_map(|(_, _, i)| slots[i].take()));
}

impl CandidateSet {
    /// Adds the complete party `members`, or records why it cannot be a
    /// candidate yet (a Ping mode without every member's ping).
    fn push(
        &mut self,
        is_ping: bool,
        party_mmr: crate::config::PartyMmr,
        pool: &[Search],
        members: Members,
    ) {
        let mut ping = Some(f64::NEG_INFINITY);
        let (mut mmr_sum, mut mmr_count, mut mmr_max) = (0.0, 0u32, f64::NEG_INFINITY);
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
                mmr_max = mmr_max.max(m);
            }
            wait_start = wait_start.min(s.queued_at);
        }
        if is_ping && ping.is_none() {
            self.waiting
                .extend(members.iter().map(|&i| (i, WaitingReason::PingNotMeasured)));
            return;
        }
        self.candidates.push(Candidate {
            seats: members.len() as u32,
            tie: members[0],
            searches: members,
            mmr: (mmr_count > 0).then(|| party_mmr.of(mmr_sum / f64::from(mmr_count), mmr_max)),
            ping_ms: ping,
            wait_start,
        });
    }
}
