//! Incomplete parties time out (docs/game-modes.md#parties): a party whose
//! members do not all have a live search waits with `PARTY_INCOMPLETE`,
//! and once it has stayed incomplete for `parties.incompleteTimeoutSeconds`
//! its waiting members fail with `PARTY_INCOMPLETE`, the message naming who
//! is missing, instead of waiting until their tickets expire.
//!
//! The cycle itself is a pure function of one pool; how long a party has
//! been incomplete is what the caller carries from cycle to cycle in an
//! [`IncompleteParties`] (the worker per mode it holds, the simulator per
//! run) and applies to each cycle's outcome with
//! [`IncompleteParties::settle`]. The time is counted from the first cycle
//! that found the party incomplete, so at most one cycle period after a
//! member's search ended. A worker that takes a mode over starts counting
//! afresh: a party then waits up to one timeout longer, never less.

use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::cycle::CycleOutcome;
use crate::reasons::WaitingReason;
use crate::recheck::FailedSearch;
use arcstr::ArcStr;
use rustc_hash::FxHashMap;

/// Since when each waiting search of an incomplete party has been found
/// incomplete (seconds, on the pool's `queuedAt` clock), by ticket id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IncompleteParties {
    since: FxHashMap<ArcStr, f64>,
}

impl IncompleteParties {
    /// No party found incomplete yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Searches being timed (members of incomplete parties still waiting).
    pub fn len(&self) -> usize {
        self.since.len()
    }

    /// Whether no search is being timed.
    pub fn is_empty(&self) -> bool {
        self.since.is_empty()
    }

    /// Applies the timeout to the `outcome` of a cycle of `config` run at
    /// `now`: each search waiting with `PARTY_INCOMPLETE` that was first
    /// found so at least `parties.incompleteTimeoutSeconds` ago moves from
    /// `waiting` to `failed` (code `PARTY_INCOMPLETE`, the message naming
    /// the missing members); the others start or keep their clocks. A
    /// search waiting because the mode is held keeps its clock and is not
    /// failed (nobody is failed while matching is held). Every other
    /// search's clock is dropped: its party is complete again, matched, or
    /// gone.
    pub fn settle(&mut self, config: &GameModeConfig, now: f64, outcome: &mut CycleOutcome) {
        if self.since.is_empty()
            && !outcome
                .waiting
                .iter()
                .any(|w| matches!(w.reason, WaitingReason::PartyIncomplete { .. }))
        {
            return;
        }
        let timeout = f64::from(config.parties.incomplete_timeout_seconds);
        let mut next = FxHashMap::default();
        let mut kept = Vec::with_capacity(outcome.waiting.len());
        for waiting in std::mem::take(&mut outcome.waiting) {
            match &waiting.reason {
                WaitingReason::PartyIncomplete { missing } => {
                    let since = self.since.get(&waiting.ticket_id).copied().unwrap_or(now);
                    if now - since >= timeout {
                        outcome.failed.push(FailedSearch {
                            ticket_id: waiting.ticket_id,
                            player_id: waiting.player_id,
                            code: Code::PartyIncomplete,
                            message: format!(
                                "the party stayed incomplete for {timeout} s; missing: {}",
                                missing.join(", ")
                            ),
                        });
                        continue;
                    }
                    next.insert(waiting.ticket_id.clone(), since);
                }
                WaitingReason::MatchingHeld => {
                    if let Some(&since) = self.since.get(&waiting.ticket_id) {
                        next.insert(waiting.ticket_id.clone(), since);
                    }
                }
                _ => {}
            }
            kept.push(waiting);
        }
        outcome.waiting = kept;
        self.since = next;
    }
}
