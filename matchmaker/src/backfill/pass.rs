//! The backfill pass: before a cycle forms new matches, it offers waiting
//! candidates to the mode's open backfills, oldest backfill first and
//! candidates in wait order (longest-waiting first).
//!
//! A party is taken whole or not at all, onto the seats (and in a role
//! queue the open roles) [`super::seats`] describes. Open seats never go
//! below zero, and a candidate is taken by at most one backfill. Each
//! backfill gets at most one fill per cycle (its seats may take several
//! candidates), claimed under the backfill's `revision`.

use super::fit::{fits, latency_to};
use super::seats::FillSeats;
use super::OpenBackfill;
use crate::candidate::{build_candidates, Candidate};
use crate::config::GameModeConfig;
use crate::cycle::{run_cycle, CycleOutcome, MatchedPlayer, ProposedTeam};
use crate::recheck::recheck;
use crate::roles::RoleTable;
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
    /// Open seats per team and role once this fill is in (docs/rules.md,
    /// "Backfill by role"); empty outside role queues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_roles_left: Vec<crate::roles::open::OpenRoles>,
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

    /// Role seats this fill takes, as [`OpenBackfill::seat_counters`]
    /// lists them after the team seats: for each team, for each role of
    /// `open_roles_left` in name order, the newcomers seated in it. Empty
    /// outside role queues.
    pub fn roles_taken(&self) -> Vec<u32> {
        let mut taken = Vec::new();
        for (index, open) in self.open_roles_left.iter().enumerate() {
            let team = self.teams.iter().find(|t| t.index == index);
            for role in open.keys() {
                let n = team.map_or(0, |t| {
                    t.players
                        .iter()
                        .filter(|p| p.role.as_deref() == Some(role.as_str()))
                        .count()
                });
                taken.push(u32::try_from(n).unwrap_or(u32::MAX));
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
    let tables = Tables {
        rules: crate::rules::RuleTable::build(config, pool, &set.candidates, &waits),
        roles: RoleTable::build(config, pool, &set.candidates, &waits),
    };
    let mut used = vec![false; set.candidates.len()];
    for backfill in order {
        let fill = fill_one(
            config,
            pool,
            &set.candidates,
            &tables,
            &mut used,
            backfill,
            now,
        );
        if let Some((fill, members)) = fill {
            for i in members {
                outcome.taken[i] = true;
            }
            outcome.fills.push(fill);
        }
    }
    outcome
}

/// The cycle's rule and role tables over its candidates (each `None` when
/// the mode has no rules, no `composition`).
struct Tables<'a> {
    rules: Option<crate::rules::RuleTable<'a>>,
    roles: Option<RoleTable>,
}

/// The fill of one backfill from the candidates not `used` yet, and the
/// pool indices of the searches it seats. With rules, each newcomer
/// satisfies every rule against the roster and the newcomers taken before
/// it (docs/rules.md#backfill); with open roles, each takes an open role
/// it listed ([`super::seats`]).
fn fill_one(
    config: &GameModeConfig,
    pool: &[Search],
    candidates: &[Candidate],
    tables: &Tables<'_>,
    used: &mut [bool],
    backfill: &OpenBackfill,
    now: f64,
) -> Option<(ProposedFill, Vec<usize>)> {
    let (rules, roles) = (tables.rules.as_ref(), tables.roles.as_ref());
    let keep_together = config.parties.keep_together;
    let mut seats = FillSeats::new(backfill, roles.zip(config.composition.as_ref()));
    let on_roster: rustc_hash::FxHashSet<&str> = backfill
        .roster
        .players
        .iter()
        .map(|p| p.player_id.as_str())
        .collect();
    let mut group = crate::rules::GroupRules::default();
    if let Some(t) = rules {
        group.start_roster(t, &backfill.roster, now - backfill.opened_at);
    }
    for (c, candidate) in candidates.iter().enumerate() {
        if seats.full() {
            break;
        }
        if used[c] || !fits(config, pool, candidate, backfill, now) {
            continue;
        }
        if rules.is_some_and(|t| group.admits(t, c).is_err()) {
            continue;
        }
        // A player the game server still lists (a client that searched
        // again before its server noticed) is never seated twice.
        if candidate
            .searches
            .iter()
            .any(|&i| on_roster.contains(pool[i].player_id.as_str()))
        {
            continue;
        }
        let masks = roles.map_or(&[][..], |t| t.masks(c));
        let taken = if keep_together {
            seats.take_party(&candidate.searches, masks)
        } else {
            seats.take_spread(&candidate.searches, masks)
        };
        if !taken {
            continue;
        }
        used[c] = true;
        if let Some(t) = rules {
            group.join(t, c);
        }
    }
    let seated = seats.finish();
    // Each newcomer's values with the mode's defaults, as a match's players
    // carry them (docs/rules.md, "The match").
    let defaults = crate::rules::player_values::defaults_of(config);
    let teams: Vec<ProposedTeam> = seated
        .members
        .iter()
        .zip(&seated.roles)
        .enumerate()
        .filter(|(_, (m, _))| !m.is_empty())
        .map(|(index, (m, r))| team(pool, backfill, index, (m, r), &defaults, now))
        .collect();
    if teams.is_empty() {
        return None;
    }
    let members = seated.members.iter().flatten().copied().collect();
    let fill = ProposedFill {
        backfill_id: backfill.backfill_id.clone(),
        match_id: backfill.match_id.clone(),
        revision: backfill.revision,
        teams,
        open_seats_left: seated.seats_left,
        open_roles_left: seated.open_roles_left,
    };
    Some((fill, members))
}

fn team(
    pool: &[Search],
    backfill: &OpenBackfill,
    index: usize,
    (members, roles): (&[usize], &[Option<ArcStr>]),
    defaults: &std::sync::Arc<crate::rules::player_values::ModeValues>,
    now: f64,
) -> ProposedTeam {
    let players: Vec<MatchedPlayer> = members
        .iter()
        .zip(roles)
        .map(|(&i, role)| {
            let s = &pool[i];
            MatchedPlayer {
                player_id: s.player_id.clone(),
                ticket_id: s.ticket_id.clone(),
                party_id: s.seated_party_id(),
                mmr: s.mmr,
                ping_ms: s.ping_ms,
                wait_seconds: (now - s.queued_at).max(0.0),
                latency_ms: backfill.region.as_ref().and_then(|r| latency_to(s, r)),
                attributes: crate::rules::PlayerValues::new(s.attributes.clone(), defaults.clone()),
                role: role.clone(),
            }
        })
        .collect();
    let mmrs: Vec<f64> = players.iter().filter_map(|p| p.mmr).collect();
    let mean_mmr = crate::mean::mean(&mmrs);
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
