//! Proposals in virtual time (docs/acceptance.md in `simulate`): with `acceptance` in
//! the mode, each match a cycle forms is held as a proposal; its members
//! answer as their arrival's `answer` says (`{"accept": false, "after":
//! 3}`; default: accept at once), and the proposal closes by the core's rule
//! ([`crate::acceptance::close`], the one the pool stores apply): made,
//! or cancelled with the ones responsible failed and cooled down, their
//! parties failed, everyone else back in the pool with their first
//! `queuedAt`.
//!
//! A proposal closes at the first instant the rule says it is over (an
//! answer, a cancel, or `acceptBy`), and takes effect at the next cycle, as
//! the worker's deadline sweep would: a requeued party is in that cycle's
//! pool.

use crate::acceptance::{close, Acceptance, Answer, Fate, Member};
use crate::cycle::ProposedMatch;
use crate::search::Search;
use arcstr::ArcStr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// An arrival's `answer`: whether and when (seconds after the proposal)
/// the player answers. An answer due at or after the deadline is never
/// given: the player stays silent and times out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimAnswer {
    /// Accept (`true`, the default) or decline.
    #[serde(default = "accepts")]
    pub accept: bool,
    /// Seconds after the proposal (>= 0; default 0).
    #[serde(default)]
    pub after: f64,
}

fn accepts() -> bool {
    true
}

impl Default for SimAnswer {
    fn default() -> Self {
        Self {
            accept: true,
            after: 0.0,
        }
    }
}

/// One proposal of the simulation (docs/acceptance.md's `proposals`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedProposal {
    /// Virtual time it was proposed (the cycle that formed it, seconds).
    pub at: f64,
    /// `sim_<n>`, in the order proposed.
    pub match_id: String,
    /// `made`, `cancelled`, or `open` (still open at `until`).
    pub outcome: &'static str,
    /// When it closed (seconds); absent while open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<f64>,
    /// Players who declined or cancelled during it.
    pub declined: Vec<String>,
    /// Players silent at `acceptBy`.
    pub timed_out: Vec<String>,
    /// Players put back in the pool.
    pub requeued: Vec<String>,
}

/// The acceptance figures of a run (`stats.acceptance`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptanceStats {
    /// Proposals formed.
    pub proposals: usize,
    /// Closed by everyone accepting.
    pub made: usize,
    /// Closed otherwise.
    pub cancelled: usize,
    /// `made / (made + cancelled)`; `null` before any closed.
    pub accepted_share: Option<f64>,
    /// Players who declined (or cancelled) during a proposal.
    pub declines: usize,
    /// Players silent at a deadline.
    pub timeouts: usize,
    /// Players put back in the pool, first `queuedAt` kept.
    pub requeued: usize,
    /// Arrivals refused because the player was cooled down
    /// (`DECLINE_COOLDOWN` in the product).
    pub cooldown_refusals: usize,
}

/// A member of an open proposal.
struct SimulatedMember {
    search: Search,
    party: String,
    /// When its answer lands (absolute seconds), if before the deadline.
    answer_at: Option<f64>,
    accept: bool,
    /// When its search was cancelled during the proposal.
    gone_at: Option<f64>,
}

impl SimulatedMember {
    fn answer(&self, at: f64) -> Answer {
        if self.gone_at.is_some_and(|g| g <= at) {
            return Answer::Gone;
        }
        match self.answer_at {
            Some(a) if a <= at && self.accept => Answer::Accept,
            Some(a) if a <= at => Answer::Decline,
            _ => Answer::Pending,
        }
    }
}

struct Open {
    index: usize,
    accept_by: f64,
    cooldown: f64,
    proposed: ProposedMatch,
    members: Vec<SimulatedMember>,
}

/// A proposal the rule closed, with each member's fate.
pub(super) struct Closed {
    /// When it closed (seconds).
    pub at: f64,
    /// The match it was.
    pub proposed: ProposedMatch,
    /// Each member with its fate.
    pub members: Vec<(Search, Fate)>,
}

/// The open proposals of a run, the cooldowns they left, and the record of
/// every proposal.
#[derive(Default)]
pub(super) struct Proposer {
    open: Vec<Open>,
    /// How many open proposals hold each player (see [`Proposer::holds`]):
    /// an arrival asks, and a scan of every open proposal per arrival cost
    /// a long run most of its time.
    held: HashMap<ArcStr, u32>,
    done: Vec<SimulatedProposal>,
    cooldowns: HashMap<String, f64>,
    stats: AcceptanceStats,
}

impl Proposer {
    /// Holds `proposed` (formed at `t`) as a proposal of `members`, each
    /// with its arrival's answer.
    pub fn propose(
        &mut self,
        acceptance: &Acceptance,
        proposed: ProposedMatch,
        members: Vec<(Search, SimAnswer)>,
        t: f64,
    ) {
        let accept_by = t + acceptance.timeout_seconds;
        let members: Vec<SimulatedMember> = members
            .into_iter()
            .map(|(search, answer)| SimulatedMember {
                party: search
                    .party
                    .as_ref()
                    .map_or_else(|| search.ticket_id.to_string(), |p| p.id.to_string()),
                answer_at: Some(t + answer.after.max(0.0)).filter(|a| *a < accept_by),
                accept: answer.accept,
                gone_at: None,
                search,
            })
            .collect();
        for m in &members {
            *self.held.entry(m.search.player_id.clone()).or_default() += 1;
        }
        self.stats.proposals += 1;
        self.done.push(SimulatedProposal {
            at: t,
            match_id: format!("sim_{}", self.done.len() + 1),
            outcome: "open",
            closed_at: None,
            declined: Vec::new(),
            timed_out: Vec::new(),
            requeued: Vec::new(),
        });
        self.open.push(Open {
            index: self.done.len() - 1,
            accept_by,
            cooldown: acceptance.decline_cooldown_seconds,
            proposed,
            members,
        });
    }

    /// Whether no proposal is open (nothing for a cycle to close).
    pub fn is_idle(&self) -> bool {
        self.open.is_empty()
    }

    /// Whether `player_id` is held by an open proposal.
    pub fn holds(&self, player_id: &str) -> bool {
        self.held.contains_key(player_id)
    }

    /// Counts one open proposal fewer holding `player_id`.
    fn release(&mut self, player_id: &str) {
        if let Some(n) = self.held.get_mut(player_id) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(player_id);
            }
        }
    }

    /// Cancels `player_id`'s search at `at` if an open proposal holds it
    /// (it counts as a decline); `false` otherwise.
    pub fn cancel(&mut self, player_id: &str, at: f64) -> bool {
        for open in &mut self.open {
            if let Some(m) = open
                .members
                .iter_mut()
                .find(|m| m.search.player_id == player_id && m.gone_at.is_none())
            {
                m.gone_at = Some(at);
                return true;
            }
        }
        false
    }

    /// Whether an arrival of `player_id` at `at` is refused by a cooldown
    /// (counted as such when it is).
    pub fn refuses(&mut self, player_id: &str, at: f64) -> bool {
        let cooled = self
            .cooldowns
            .get(player_id)
            .is_some_and(|until| at < *until);
        if cooled {
            self.stats.cooldown_refusals += 1;
        }
        cooled
    }

    /// Closes every proposal the rule says is over by `t`, each at the
    /// first instant it was (an answer, a cancel or the deadline), in the
    /// order they were proposed.
    pub fn close_due(&mut self, t: f64) -> Vec<Closed> {
        let mut closed = Vec::new();
        let mut still = Vec::with_capacity(self.open.len());
        for open in std::mem::take(&mut self.open) {
            match first_close(&open, t) {
                Some((at, fates)) => {
                    for m in &open.members {
                        self.release(&m.search.player_id);
                    }
                    closed.push(self.apply(open, at, fates));
                }
                None => still.push(open),
            }
        }
        self.open = still;
        closed
    }

    fn apply(&mut self, open: Open, at: f64, fates: Vec<Fate>) -> Closed {
        let record = &mut self.done[open.index];
        record.closed_at = Some(at);
        let made = fates.iter().all(|f| *f == Fate::Matched);
        record.outcome = if made { "made" } else { "cancelled" };
        if made {
            self.stats.made += 1;
        } else {
            self.stats.cancelled += 1;
        }
        for (m, fate) in open.members.iter().zip(&fates) {
            let player = m.search.player_id.to_string();
            let cooled = match fate {
                Fate::Fails { code, cooled } => {
                    if *code == crate::Code::AcceptanceTimeout.as_str() {
                        record.timed_out.push(player.clone());
                        self.stats.timeouts += 1;
                    } else if *code == crate::Code::MatchDeclined.as_str() {
                        record.declined.push(player.clone());
                        self.stats.declines += 1;
                    }
                    *cooled
                }
                Fate::AlreadyEnded { cooled } => {
                    record.declined.push(player.clone());
                    self.stats.declines += 1;
                    *cooled
                }
                Fate::Requeued => {
                    record.requeued.push(player.clone());
                    self.stats.requeued += 1;
                    false
                }
                Fate::Matched => false,
            };
            if cooled && open.cooldown > 0.0 {
                self.cooldowns.insert(player, at + open.cooldown);
            }
        }
        Closed {
            at,
            proposed: open.proposed,
            members: open
                .members
                .into_iter()
                .map(|m| m.search)
                .zip(fates)
                .collect(),
        }
    }

    /// The record of every proposal, the run's figures, and the searches
    /// still held at the end (they are still waiting).
    pub fn finish(mut self) -> (Vec<SimulatedProposal>, AcceptanceStats, Vec<Search>) {
        let closed = self.stats.made + self.stats.cancelled;
        self.stats.accepted_share = (closed > 0).then(|| self.stats.made as f64 / closed as f64);
        let held = self
            .open
            .into_iter()
            .flat_map(|o| o.members.into_iter().map(|m| m.search))
            .collect();
        (self.done, self.stats, held)
    }
}

/// The first instant at or before `t` the core's rule closes `open`, with
/// the fates; `None` while it stays open.
fn first_close(open: &Open, t: f64) -> Option<(f64, Vec<Fate>)> {
    let mut instants: Vec<f64> = open
        .members
        .iter()
        .flat_map(|m| [m.answer_at, m.gone_at])
        .flatten()
        .chain([open.accept_by])
        .filter(|at| *at <= t)
        .collect();
    instants.sort_by(f64::total_cmp);
    instants.into_iter().find_map(|at| {
        let members: Vec<Member<'_>> = open
            .members
            .iter()
            .map(|m| Member {
                ticket_id: &m.search.ticket_id,
                party: &m.party,
                answer: m.answer(at),
            })
            .collect();
        close(&members, open.accept_by, at).map(|fates| (at, fates))
    })
}

/// Gives `share` (0..=1) of the arrivals of `events`, drawn with `seed`, the
/// answer "decline `after` seconds into the proposal" (the rest keep
/// theirs): a replay of real games with some players declining.
pub fn assign_declines(events: &mut [super::Event], share: f64, after: f64, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0dec_11e5);
    for event in events {
        if let super::Event::Arrival { answer, .. } = event {
            if rng.gen::<f64>() < share {
                *answer = Some(SimAnswer {
                    accept: false,
                    after,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
