//! The backfill pass: before a cycle forms new matches, it offers waiting
//! candidates to the mode's open backfills, oldest backfill first and
//! candidates in wait order (longest-waiting first).
//!
//! A party is taken whole or not at all: with `keepTogether` it needs one
//! team with as many open seats as it has members (the team with the
//! fewest such seats is used, so larger gaps stay for larger parties);
//! without, it may spread over the open seats of every team (each member
//! to the team with the most seats left). Open seats never go below zero,
//! and a candidate is taken by at most one backfill. Each backfill gets at
//! most one fill per cycle (its seats may take several candidates), claimed
//! under the backfill's `revision`.

use super::fit::{fits, latency_to};
use super::OpenBackfill;
use crate::candidate::{build_candidates, Candidate};
use crate::config::GameModeConfig;
use crate::cycle::{run_cycle, CycleOutcome, MatchedPlayer, ProposedTeam};
use crate::recheck::recheck;
use crate::search::Search;
use arcstr::ArcStr;
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// The new players one backfill takes in one cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedFill {
    /// `bf_…` of the backfill filled.
    pub backfill_id: ArcStr,
    /// `mat_…` of its match.
    pub match_id: ArcStr,
    /// The backfill's revision the fill was computed from.
    pub revision: u64,
    /// Teams that get new players, in shape order; each `index` is the
    /// team's position in the match and `players` only the newcomers.
    pub teams: Vec<ProposedTeam>,
    /// Open seats per team once this fill is in.
    pub open_seats_left: Vec<u32>,
}

impl ProposedFill {
    /// Ticket ids of every newcomer, team by team: what the claim takes.
    pub fn ticket_ids(&self) -> Vec<&str> {
        self.teams
            .iter()
            .flat_map(|t| t.players.iter().map(|p| p.ticket_id.as_str()))
            .collect()
    }

    /// Seats this fill takes per team (players), in shape order.
    pub fn seats_taken(&self) -> Vec<u32> {
        let mut taken = vec![0u32; self.open_seats_left.len()];
        for t in &self.teams {
            if let Some(slot) = taken.get_mut(t.index) {
                *slot += u32::try_from(t.players.len()).unwrap_or(u32::MAX);
            }
        }
        taken
    }
}

/// What the pass decided: the fills, and which pool searches they took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FillOutcome {
    /// One fill per backfill that took anyone.
    pub fills: Vec<ProposedFill>,
    /// `taken[i]`: pool search `i` is in a fill.
    pub taken: Vec<bool>,
}

/// Offers the waiting candidates of `pool` to `backfills` at `now` (see the
/// module documentation). Expired backfills, backfills without open seats
/// and every backfill of a mode whose `backfill` block is off take nobody.
pub fn fill_pass(
    config: &GameModeConfig,
    pool: &[Search],
    backfills: &[OpenBackfill],
    now: f64,
) -> FillOutcome {
    let mut outcome = FillOutcome {
        fills: Vec::new(),
        taken: vec![false; pool.len()],
    };
    if config.backfill_enabled().is_none() || backfills.is_empty() {
        return outcome;
    }
    let (valid, _) = recheck(config, pool);
    let set = build_candidates(config, pool, &valid);
    let mut order: Vec<&OpenBackfill> = backfills
        .iter()
        .filter(|b| now < b.expires_at && b.seats_left() > 0)
        .collect();
    order.sort_by(|a, b| {
        a.opened_at
            .total_cmp(&b.opened_at)
            .then_with(|| a.backfill_id.cmp(&b.backfill_id))
    });
    let waits: Vec<f64> = set.candidates.iter().map(|c| now - c.wait_start).collect();
    let rules = crate::rules::RuleTable::build(config, pool, &set.candidates, &waits);
    let mut used = vec![false; set.candidates.len()];
    for backfill in order {
        let fill = fill_one(
            config,
            pool,
            &set.candidates,
            rules.as_ref(),
            &mut used,
            backfill,
            now,
        );
        if let Some(fill) = fill {
            for t in &fill.teams {
                for p in &t.players {
                    if let Some(i) = pool.iter().position(|s| s.ticket_id == p.ticket_id) {
                        outcome.taken[i] = true;
                    }
                }
            }
            outcome.fills.push(fill);
        }
    }
    outcome
}

/// The fill of one backfill from the candidates not `used` yet. With
/// rules, each newcomer satisfies every rule against the roster and the
/// newcomers taken before it (docs/rules.md#backfill).
fn fill_one(
    config: &GameModeConfig,
    pool: &[Search],
    candidates: &[Candidate],
    rules: Option<&crate::rules::RuleTable<'_>>,
    used: &mut [bool],
    backfill: &OpenBackfill,
    now: f64,
) -> Option<ProposedFill> {
    let keep_together = config.parties.keep_together;
    let mut seats = backfill.open_seats.clone();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); seats.len()];
    let mut group = crate::rules::GroupRules::default();
    if let Some(t) = rules {
        group.start_roster(t, &backfill.roster, now - backfill.opened_at);
    }
    for (c, candidate) in candidates.iter().enumerate() {
        if seats.iter().all(|s| *s == 0) {
            break;
        }
        if used[c] || !fits(config, pool, candidate, backfill, now) {
            continue;
        }
        if rules.is_some_and(|t| group.admits(t, c).is_err()) {
            continue;
        }
        let size = candidate.seats;
        if keep_together {
            // The team with the fewest open seats that still holds the party.
            let team = seats
                .iter()
                .enumerate()
                .filter(|(_, s)| **s >= size)
                .min_by_key(|(i, s)| (**s, *i))
                .map(|(i, _)| i);
            let Some(team) = team else { continue };
            seats[team] -= size;
            members[team].extend(candidate.searches.iter().copied());
        } else {
            if seats.iter().sum::<u32>() < size {
                continue;
            }
            for &i in &candidate.searches {
                let Some(team) = seats
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s > 0)
                    .max_by_key(|(i, s)| (**s, std::cmp::Reverse(*i)))
                    .map(|(i, _)| i)
                else {
                    break;
                };
                seats[team] -= 1;
                members[team].push(i);
            }
        }
        used[c] = true;
        if let Some(t) = rules {
            group.join(t, c);
        }
    }
    let teams: Vec<ProposedTeam> = members
        .into_iter()
        .enumerate()
        .filter(|(_, m)| !m.is_empty())
        .map(|(index, m)| team(pool, backfill, index, &m, now))
        .collect();
    if teams.is_empty() {
        return None;
    }
    Some(ProposedFill {
        backfill_id: backfill.backfill_id.clone(),
        match_id: backfill.match_id.clone(),
        revision: backfill.revision,
        teams,
        open_seats_left: seats,
    })
}

fn team(
    pool: &[Search],
    backfill: &OpenBackfill,
    index: usize,
    members: &[usize],
    now: f64,
) -> ProposedTeam {
    let players: Vec<MatchedPlayer> = members
        .iter()
        .map(|&i| {
            let s = &pool[i];
            MatchedPlayer {
                player_id: s.player_id.clone(),
                ticket_id: s.ticket_id.clone(),
                party_id: s.seated_party_id(),
                mmr: s.mmr,
                ping_ms: s.ping_ms,
                wait_seconds: (now - s.queued_at).max(0.0),
                latency_ms: backfill.region.as_ref().and_then(|r| latency_to(s, r)),
                attributes: crate::rules::PlayerValues::own(s.attributes.clone()),
                // Backfill by role is not part of role queues yet.
                role: None,
            }
        })
        .collect();
    let mmrs: Vec<f64> = players.iter().filter_map(|p| p.mmr).collect();
    let mean_mmr = (!mmrs.is_empty()).then(|| mmrs.iter().sum::<f64>() / mmrs.len() as f64);
    ProposedTeam {
        index,
        players,
        mean_mmr,
        bots: 0,
        bot_roles: Vec::new(),
    }
}

/// A cycle with backfills: the fills first, then [`run_cycle`] over the
/// searches no fill took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CycleWithFills {
    /// Fills to claim, one per backfill that took anyone.
    pub fills: Vec<ProposedFill>,
    /// The rest of the cycle (new matches, failures, waiting reasons);
    /// `pool_size` counts the whole pool.
    pub cycle: CycleOutcome,
}

/// Runs one cycle of `config` over `pool` at `now`, serving `backfills`
/// before new matches form (docs/backfill.md). Without open backfills it is exactly
/// [`run_cycle`].
pub fn run_cycle_with_backfills(
    config: &GameModeConfig,
    pool: &[Search],
    backfills: &[OpenBackfill],
    now: f64,
    rng: &mut dyn RngCore,
) -> CycleWithFills {
    let fills = fill_pass(config, pool, backfills, now);
    if fills.fills.is_empty() {
        return CycleWithFills {
            fills: Vec::new(),
            cycle: run_cycle(config, pool, now, rng),
        };
    }
    let rest: Vec<Search> = pool
        .iter()
        .zip(&fills.taken)
        .filter(|(_, taken)| !**taken)
        .map(|(s, _)| s.clone())
        .collect();
    let mut cycle = run_cycle(config, &rest, now, rng);
    cycle.pool_size = pool.len();
    CycleWithFills {
        fills: fills.fills,
        cycle,
    }
}
