//! One matchmaking cycle over a mode's pool (docs/game-modes.md#how-a-cycle-forms-matches): the single entry point
//! the worker and the simulator both call.

use crate::candidate::{build_candidates, Candidate};
use crate::config::{Algorithm, GameModeConfig};
use crate::grouping::Grouper;
use crate::reasons::WaitingReason;
use crate::recheck::{recheck_reading, FailedSearch};
use crate::search::Search;
use crate::seating::{seat, Formed, SeatPlan, SeatRegion};
use crate::tolerance::capped_mmr_range;
use arcstr::ArcStr;
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// A player seated in a proposed match (docs/webhook-events.md's `teams[].players[]`).
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
    /// The player's own latency to the match's region (milliseconds);
    /// `null` without `regions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// The player's own values of the mode's declared attributes
    /// (docs/rules.md), defaults filled in; empty without declarations.
    #[serde(default, skip_serializing_if = "crate::rules::PlayerValues::is_empty")]
    pub attributes: crate::rules::PlayerValues,
    /// The role seat the player takes (docs/rules.md, "Role queues"), one
    /// of the roles its ticket listed or `any`; absent without `composition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ArcStr>,
}

/// One team of a proposed match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedTeam {
    /// Position in the match shape.
    pub index: usize,
    /// The humans: `matchShape[index]` players, less the bot seats.
    pub players: Vec<MatchedPlayer>,
    /// Mean MMR of the players that carry one; `null` if none does (bots
    /// never count).
    pub mean_mmr: Option<f64>,
    /// Bot seats completing the team (docs/game-modes.md#thin-pools-smaller-matches-and-bots); 0 without bots.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bots: u32,
    /// With `composition`, the role of each bot seat: the team's role
    /// seats no human took (docs/rules.md, "Role queues"); empty without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bot_roles: Vec<ArcStr>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A match the cycle formed, not yet claimed (docs/architecture.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedMatch {
    /// Teams in shape order.
    pub teams: Vec<ProposedTeam>,
    /// Max minus min player MMR (0 without MMRs), docs/simulate.md.
    pub mmr_spread: f64,
    /// Max minus min team mean MMR (0 without MMRs), docs/simulate.md.
    pub team_imbalance: f64,
    /// The shape used (players per team): the base shape, a relaxed one, a
    /// settled flexible match's team sizes; a bot match's is the base shape.
    #[serde(default)]
    pub match_shape: Vec<u32>,
    /// Seats open to backfill per team: the base shape minus the one used
    /// (a flexible shape's `max` minus each team's players); a bot match's
    /// bot seats when `bots.replaceable`, else zeros.
    #[serde(default)]
    pub seats_open: Vec<u32>,
    /// MMR of a bot seat: the humans' mean; `null` without bots or MMRs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_mmr: Option<f64>,
    /// The region the match is played in (docs/regions.md); `null` without `regions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<ArcStr>,
    /// What every player agreed on (docs/rules.md, "The match"): the
    /// common value of each `equal` rule all share, the shared values of
    /// each `intersect` rule, by attribute; empty without rules.
    #[serde(
        default,
        skip_serializing_if = "crate::rules::DeclaredValues::is_empty"
    )]
    pub attributes: crate::rules::DeclaredValues,
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

/// A search left in the pool, and why (docs/game-modes.md#why-a-player-is-still-waiting).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingSearch {
    /// The waiting ticket.
    pub ticket_id: ArcStr,
    /// Its player.
    pub player_id: ArcStr,
    /// Why nobody was found this cycle.
    pub reason: WaitingReason,
    /// Seats of the largest in-range group the cycle built around or with
    /// this search (docs/architecture.md#where-each-rule-lives); 0 when it was no candidate.
    #[serde(default)]
    pub found: u32,
    /// Seats of the smallest match its wait allows now (docs/architecture.md#where-each-rule-lives).
    #[serde(default)]
    pub needed: u32,
}

impl WaitingSearch {
    /// The stored and served status: the reason with `found` and `needed`
    /// beside its `code`.
    pub fn status(&self) -> crate::reasons::WaitingStatus {
        crate::reasons::WaitingStatus {
            reason: self.reason.clone(),
            found: self.found,
            needed: self.needed,
        }
    }
}

/// Everything one cycle decided.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleOutcome {
    /// Matches formed, to be claimed atomically by the caller.
    pub matches: Vec<ProposedMatch>,
    /// Searches the current config rules out (docs/game-modes.md, "Config changes").
    pub failed: Vec<FailedSearch>,
    /// Searches left waiting, each with its reason.
    pub waiting: Vec<WaitingSearch>,
    /// Searches in the pool handed in.
    pub pool_size: usize,
    /// Candidates (complete, eligible parties) of this cycle.
    pub candidates: usize,
    /// Per rule over attributes (docs/rules.md), by name: the candidates
    /// it turned away in the tries that stayed short this cycle (docs/rules.md,
    /// "Which rule costs wait time"); empty without rules.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rule_turned_away: std::collections::BTreeMap<String, u32>,
    /// Searches left waiting by each role they listed (docs/rules.md, "Role
    /// queues"); empty without `composition`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub waiting_by_role: std::collections::BTreeMap<String, u32>,
}

/// Runs one cycle of `config` over `pool` at time `now` (seconds, on the
/// pool's `queuedAt` clock). `rng` is only used by FIFO to shuffle groups.
///
/// Steps (docs/game-modes.md#how-a-cycle-forms-matches, docs/game-modes.md#thin-pools-smaller-matches-and-bots): re-check the pool against the config, build
/// candidates, then group them in passes: full-size matches for every
/// candidate first; then, for anchors that waited long enough, the relaxed
/// shapes largest first (or a settled flexible match); then bot matches.
/// Each group is seated into teams. Never panics on any pool; an empty
/// pool gives an empty outcome.
pub fn run_cycle(
    config: &GameModeConfig,
    pool: &[Search],
    now: f64,
    rng: &mut dyn RngCore,
) -> CycleOutcome {
    // The re-check reads every search's values of the rules as it checks
    // them, for the rule table below (docs/performance.md).
    let specs = crate::rules::search_columns::RuleSpecs::of(config);
    let (valid, failed, own) = recheck_reading(config, pool, specs.as_ref());
    let set = build_candidates(config, pool, &valid);
    let candidates = &set.candidates;
    let keep_together = config.parties.keep_together;
    let waits: Vec<f64> = candidates.iter().map(|c| now - c.wait_start).collect();

    let (values, ranges): (Vec<f64>, Vec<f64>) = match &config.algorithm {
        Algorithm::Mmr { .. } => candidates
            .iter()
            .zip(&waits)
            .map(|(c, w)| {
                (
                    c.mmr.unwrap_or(0.0),
                    capped_mmr_range(&config.algorithm, *w),
                )
            })
            .unzip(),
        Algorithm::Ping { max_delta } => candidates
            .iter()
            .map(|c| (c.ping_ms.unwrap_or(0.0), *max_delta))
            .unzip(),
        Algorithm::Fifo {} => (Vec::new(), Vec::new()),
    };
    let regions = config
        .regions
        .as_ref()
        .map(|r| crate::regions::RegionTable::build(r, pool, candidates, &waits));
    let rules = specs.as_ref().zip(own).and_then(|(specs, own)| {
        crate::rules::RuleTable::from_values(config, pool, candidates, &waits, specs, own)
    });
    let roles = crate::roles::RoleTable::build(config, pool, candidates, &waits);
    let mut grouper = match &config.algorithm {
        Algorithm::Fifo {} => Grouper::fifo(candidates, keep_together),
        _ => Grouper::closeness(candidates, &values, &ranges, keep_together)
            .with_hints(&config.algorithm, &waits),
    }
    .with_regions(regions.as_ref())
    .with_rules(rules.as_ref())
    .with_roles(roles.as_ref());

    let mut formed = Vec::new();
    let mut reasons = full_pass(&mut grouper, config, &mut formed);
    crate::relaxation::relaxed_pass(&mut grouper, config, &waits, &mut formed);
    for (c, reason) in crate::flexible::settle_pass(&mut grouper, config, &waits, &mut formed) {
        if let Ok(at) = reasons.binary_search_by_key(&c, |(a, _)| *a) {
            reasons[at].1 = reason;
        }
    }
    crate::bots::bot_pass(&mut grouper, config, &waits, &mut formed);

    let mut outcome = CycleOutcome {
        failed,
        pool_size: pool.len(),
        candidates: candidates.len(),
        rule_turned_away: grouper.rule_turned_away().into_iter().collect(),
        ..CycleOutcome::default()
    };
    let found = grouper.found();
    let defaults = crate::rules::player_values::defaults_of(config);
    let mut players = crate::seating::gather(pool, candidates, &formed, &defaults);
    let mut first = 0;
    for f in &formed {
        let seats: usize = f.group.iter().map(|&c| candidates[c].searches.len()).sum();
        let group_players = players.get_mut(first..first + seats).unwrap_or_default();
        first += seats;
        let region = regions.as_ref().map(|t| t.choose(candidates, &f.group));
        let seated = match &region {
            // A pass never forms a group without a common region.
            Some(None) => None,
            Some(Some(index)) => {
                let index = *index;
                let table = regions.as_ref().map(|table| SeatRegion { table, index });
                let roles = roles.as_ref();
                seat(config, group_players, candidates, f, now, table, roles, rng)
            }
            None => seat(
                config,
                group_players,
                candidates,
                f,
                now,
                None,
                roles.as_ref(),
                rng,
            ),
        };
        match seated {
            Some(mut m) => {
                if let Some(t) = &rules {
                    m.attributes = t.match_attributes(&f.group);
                }
                outcome.matches.push(m)
            }
            // Unreachable when a pass admitted the group; kept waiting, never lost.
            None => {
                for &c in &f.group {
                    let status = (
                        found[c],
                        crate::queue_status::needed(config, waits[c], candidates[c].seats),
                    );
                    push_waiting(
                        &mut outcome,
                        pool,
                        &candidates[c],
                        WaitingReason::NoExactSeating {
                            completing_party_sizes: Vec::new(),
                        },
                        status,
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
            found: 0,
            needed: crate::queue_status::needed(
                config,
                now - pool[i].queued_at,
                pool[i].party_seats(),
            ),
        });
    }
    for (c, reason) in reasons {
        if !grouper.is_matched(c) {
            let needed = crate::queue_status::needed(config, waits[c], candidates[c].seats);
            let status = (found[c], needed);
            push_waiting(&mut outcome, pool, &candidates[c], reason, status);
        }
    }
    outcome.waiting_by_role = crate::roles::table::waiting_by_role(config, pool, &outcome.waiting);
    outcome
}

/// The first pass (docs/game-modes.md#the-mmr-window): full-size matches, every unmatched candidate
/// anchoring in wait order. Returns the reason of each candidate whose try
/// stayed short, by candidate (increasing): only those, not a slot per
/// candidate (most are matched, and a reason is large).
fn full_pass(
    grouper: &mut Grouper,
    config: &GameModeConfig,
    formed: &mut Vec<Formed>,
) -> Vec<(usize, WaitingReason)> {
    let base = config.match_shape.caps();
    let size: u32 = base.iter().sum();
    let mut reasons = Vec::new();
    #[allow(clippy::needless_range_loop)] // `grouper` is borrowed mutably inside.
    for anchor in 0..grouper.len() {
        if grouper.is_matched(anchor) {
            continue;
        }
        if grouper.alive_seats() < u64::from(size) {
            // Fewer seats wait than a match needs (so the try is cheap): it
            // still runs, for `found`.
            reasons.push((anchor, grouper.not_enough(size)));
            grouper.try_anchor(anchor, &base);
            continue;
        }
        let attempt = grouper.try_anchor(anchor, &base);
        match attempt.short {
            None => {
                grouper.take(&attempt.group);
                formed.push(Formed {
                    group: attempt.group,
                    plan: SeatPlan::Exact(base.clone()),
                });
            }
            Some(reason) => reasons.push((anchor, reason)),
        }
    }
    reasons
}

fn push_waiting(
    outcome: &mut CycleOutcome,
    pool: &[Search],
    candidate: &Candidate,
    reason: WaitingReason,
    (found, needed): (u32, u32),
) {
    for &i in &candidate.searches {
        outcome.waiting.push(WaitingSearch {
            ticket_id: pool[i].ticket_id.clone(),
            player_id: pool[i].player_id.clone(),
            reason: reason.clone(),
            found,
            needed,
        });
    }
}
