//! Seating a formed group into teams (docs/game-modes.md#teamassignment, docs/game-modes.md#thin-pools-smaller-matches-and-bots): the humans by the
//! mode's `teamAssignment` into the seats planned for them, then bot seats
//! to complete the base shape when the group is a bot match.

use crate::candidate::Candidate;
use crate::config::{Algorithm, GameModeConfig, MatchShape, TeamAssignment};
use crate::cycle::{MatchedPlayer, ProposedMatch, ProposedTeam};
use crate::roles::seat::{seat_group, Choice};
use crate::search::Search;
use crate::teams::{self, Unit};
use arcstr::ArcStr;
use rand::RngCore;

/// How a formed group is seated.
#[derive(Debug, Clone, PartialEq)]
pub enum SeatPlan {
    /// The humans fill these team sizes exactly: the base shape, a relaxed
    /// shape or the team sizes of a settled flexible match.
    Exact(Vec<u32>),
    /// A bot match: `humans[t]` players on team `t`, bots on the rest of
    /// the base shape's seats.
    WithBots {
        /// Humans per team of the base shape.
        humans: Vec<u32>,
    },
}

/// A group a pass of the cycle formed, not yet seated.
#[derive(Debug, Clone, PartialEq)]
pub struct Formed {
    /// Candidate indices, anchor first.
    pub group: Vec<usize>,
    /// Its seats.
    pub plan: SeatPlan,
}

/// What seating takes from a player's search, copied out of the pool.
#[derive(Debug, Clone, Default)]
pub struct Gathered {
    ticket_id: ArcStr,
    player_id: ArcStr,
    party_id: Option<ArcStr>,
    mmr: Option<f64>,
    ping_ms: Option<f64>,
    queued_at: f64,
    attributes: crate::rules::PlayerValues,
}

/// Every player of `formed`, group after group (each group's candidates
/// in order, each candidate's searches in order), as [`seat`] takes them;
/// `defaults` are what the mode declares (its defaults, its declared names), shared by every player.
///
/// The pool is read once in its own order rather than group by group: a
/// group's players sit anywhere in the pool, and each one's ids are
/// reference-counted strings whose clone writes to their allocation, so
/// reading them in group order was a cache miss per id that nothing could
/// overlap once the pool outgrows the caches.
pub fn gather(
    pool: &[Search],
    candidates: &[Candidate],
    formed: &[Formed],
    defaults: &std::sync::Arc<crate::rules::player_values::ModeValues>,
) -> Vec<Gathered> {
    const NONE: u32 = u32::MAX;
    let mut slot_of = vec![NONE; pool.len()];
    let mut slots = 0usize;
    for f in formed {
        for &c in &f.group {
            for &i in &candidates[c].searches {
                if let Some(slot) = slot_of.get_mut(i) {
                    *slot = u32::try_from(slots).unwrap_or(NONE);
                }
                slots += 1;
            }
        }
    }
    let mut gathered = vec![Gathered::default(); slots];
    for (s, &slot) in pool.iter().zip(&slot_of) {
        if let Some(g) = gathered.get_mut(slot as usize) {
            *g = Gathered {
                ticket_id: s.ticket_id.clone(),
                player_id: s.player_id.clone(),
                party_id: s.seated_party_id(),
                mmr: s.mmr,
                ping_ms: s.ping_ms,
                queued_at: s.queued_at,
                attributes: crate::rules::PlayerValues::new(s.attributes.clone(), defaults.clone()),
            };
        }
    }
    gathered
}

/// Seats `formed` by `config`'s rule, in `region` (each player's
/// `latencyMs` is its own latency there), into the role seats of `roles`
/// when the mode has a `composition` (docs/rules.md, "Role queues"; each
/// player's `role` set). `None` only if the humans cannot be seated
/// exactly (a pass never forms such a group). `players` are the group's
/// players as [`gather`] gave them, taken out when seated.
#[allow(clippy::too_many_arguments)] // One call site; each is a distinct input.
pub fn seat(
    config: &GameModeConfig,
    players: &mut [Gathered],
    candidates: &[Candidate],
    formed: &Formed,
    now: f64,
    region: Option<SeatRegion<'_>>,
    roles: Option<&crate::roles::RoleTable>,
    rng: &mut dyn RngCore,
) -> Option<ProposedMatch> {
    let group = &formed.group;
    let base = config.match_shape.caps();
    let planned: &[u32] = match &formed.plan {
        SeatPlan::Exact(c) => c,
        SeatPlan::WithBots { humans } => humans,
    };
    // A unit is a whole party with keep-together, else a single player:
    // `unit_members[u]` is a range of `players`.
    let seated = players.len();
    // Each player's latency to the match's region, from the cycle's table
    // (a solo's is its candidate's row, a party member's its own entry).
    let latency: Vec<Option<f64>> = match region {
        None => Vec::new(),
        Some(SeatRegion { table, index }) => group
            .iter()
            .flat_map(|&c| {
                let solo = candidates[c].searches.len() == 1;
                candidates[c].searches.iter().map(move |&i| {
                    if solo {
                        table.candidate_latency(c, index)
                    } else {
                        table.search_latency(i, index)
                    }
                })
            })
            .collect(),
    };
    let mut unit_members: Vec<std::ops::Range<usize>> = Vec::with_capacity(seated);
    if config.parties.keep_together {
        let mut start = 0;
        for &c in group {
            let len = candidates[c].searches.len();
            unit_members.push(start..start + len);
            start += len;
        }
    } else {
        unit_members.extend((0..seated).map(|i| i..i + 1));
    }
    let units: Vec<Unit> = unit_members
        .iter()
        .map(|r| Unit {
            seats: r.len() as u32,
            value_sum: r.clone().map(|k| players[k].mmr.unwrap_or(0.0)).sum(),
        })
        .collect();
    // Teams without humans (a bot match) take no part in the seating.
    let live_of =
        |caps: &[u32]| -> Vec<usize> { (0..caps.len()).filter(|&t| caps[t] > 0).collect() };
    let (seating, unit_roles, bot_roles, human_caps, live) = match roles {
        Some(t) => {
            let role_units: Vec<&[u64]> = if config.parties.keep_together {
                group.iter().map(|&c| t.masks(c)).collect()
            } else {
                group.iter().flat_map(|&c| t.masks(c).chunks(1)).collect()
            };
            let values: Vec<f64> = units.iter().map(|u| u.value_sum).collect();
            let seats = t.seats_for(*group.first()?);
            // A bot match's humans sit as the pass split them if their
            // roles allow, else in the first other split that gives every
            // human a role seat (docs/rules.md, "Bots in role queues").
            let splits = match &formed.plan {
                SeatPlan::Exact(c) => vec![c.clone()],
                SeatPlan::WithBots { humans } => crate::roles::bot_splits(&base, humans),
            };
            let mut found = None;
            for split in splits {
                let live = live_of(&split);
                let live_caps: Vec<u32> = live.iter().map(|&t| split[t]).collect();
                let choice = match (&config.algorithm, config.team_assignment) {
                    (Algorithm::Fifo {}, _) => Choice::Shuffled(&mut *rng),
                    (_, TeamAssignment::Balanced) => Choice::Balanced,
                    (_, TeamAssignment::Snake) => Choice::Snake,
                };
                if let Some(chosen) = seat_group(&role_units, &values, &live_caps, seats, choice) {
                    found = Some((split, live, chosen));
                    break;
                }
            }
            let (split, live, chosen) = found?;
            let names: Vec<Vec<ArcStr>> = chosen
                .roles
                .iter()
                .map(|rs| rs.iter().map(|&r| t.role_arc(r)).collect())
                .collect();
            let bot_roles = match &formed.plan {
                SeatPlan::Exact(_) => Vec::new(),
                SeatPlan::WithBots { .. } => chosen
                    .empty_seats(seats, split.len(), &live)
                    .into_iter()
                    .map(|team| team.into_iter().map(|r| t.role_arc(r)).collect())
                    .collect(),
            };
            (chosen.team_of, names, bot_roles, split, live)
        }
        None => {
            let live = live_of(planned);
            let live_caps: Vec<u32> = live.iter().map(|&t| planned[t]).collect();
            let seating = match (&config.algorithm, config.team_assignment) {
                (Algorithm::Fifo {}, _) => teams::shuffled(&units, &live_caps, rng)?,
                (_, TeamAssignment::Balanced) => teams::balanced(&units, &live_caps)?,
                (_, TeamAssignment::Snake) => teams::snake(&units, &live_caps)?,
            };
            (seating, Vec::new(), Vec::new(), planned.to_vec(), live)
        }
    };

    let bots_of = |t: usize| match &formed.plan {
        SeatPlan::Exact(_) => 0,
        SeatPlan::WithBots { .. } => base
            .get(t)
            .copied()
            .unwrap_or(0)
            .saturating_sub(human_caps[t]),
    };
    let mut teams: Vec<ProposedTeam> = (0..human_caps.len())
        .map(|index| ProposedTeam {
            index,
            players: Vec::with_capacity(human_caps[index] as usize),
            mean_mmr: None,
            bots: bots_of(index),
            bot_roles: bot_roles.get(index).cloned().unwrap_or_default(),
        })
        .collect();
    for (u, (members, &t)) in unit_members.iter().zip(&seating).enumerate() {
        let team = live[t];
        for (k, at) in members.clone().enumerate() {
            let s = std::mem::take(&mut players[at]);
            teams[team].players.push(MatchedPlayer {
                player_id: s.player_id,
                ticket_id: s.ticket_id,
                party_id: s.party_id,
                mmr: s.mmr,
                ping_ms: s.ping_ms,
                wait_seconds: (now - s.queued_at).max(0.0),
                latency_ms: latency.get(at).copied().flatten(),
                attributes: s.attributes,
                role: unit_roles.get(u).and_then(|r| r.get(k)).cloned(),
            });
        }
    }
    // Quality over humans only (docs/architecture.md#where-each-rule-lives).
    let mut all = Vec::new();
    let mut means = Vec::new();
    for team in &mut teams {
        let mmrs: Vec<f64> = team.players.iter().filter_map(|p| p.mmr).collect();
        all.extend_from_slice(&mmrs);
        if let Some(mean) = crate::mean::mean(&mmrs) {
            team.mean_mmr = Some(mean);
            means.push(mean);
        }
    }
    let (match_shape, seats_open, bot_mmr) = match &formed.plan {
        SeatPlan::Exact(used) => {
            let open: Vec<u32> = match &config.match_shape {
                MatchShape::Flexible(f) => used
                    .iter()
                    .map(|u| f.team_size.max.saturating_sub(*u))
                    .collect(),
                MatchShape::Fixed(_) => used
                    .iter()
                    .zip(&base)
                    .map(|(u, b)| b.saturating_sub(*u))
                    .collect(),
            };
            (used.clone(), open, None)
        }
        SeatPlan::WithBots { .. } => {
            let replaceable = config.bots.as_ref().is_some_and(|b| b.replaceable);
            let open = teams
                .iter()
                .map(|t| if replaceable { t.bots } else { 0 })
                .collect();
            let mean = crate::mean::mean(&all);
            (base.clone(), open, mean)
        }
    };
    Some(ProposedMatch {
        teams,
        mmr_spread: range_of(&all),
        team_imbalance: range_of(&means),
        match_shape,
        seats_open,
        bot_mmr,
        region: region.map(|r| r.table.name(r.index).clone()),
        attributes: crate::rules::DeclaredValues::new(),
    })
}

/// The region a match is seated in: its index in the cycle's
/// [`RegionTable`], which holds every player's latency to it.
#[derive(Debug, Clone, Copy)]
pub struct SeatRegion<'t> {
    /// The cycle's region table.
    pub table: &'t crate::regions::RegionTable,
    /// The chosen region's index in it.
    pub index: usize,
}

/// The range of `values` (0 when empty), to a thousandth: a quality figure
/// read by people, without the float noise of a difference of means
/// (`0.20000000000004547`).
fn range_of(values: &[f64]) -> f64 {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() {
        ((hi - lo) * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

/// Seat counts of the units of `group` as the seating sees them: whole
/// parties with keep-together, else single players.
pub fn unit_sizes(candidates: &[Candidate], group: &[usize], keep_together: bool) -> Vec<u32> {
    if keep_together {
        group.iter().map(|&c| candidates[c].seats).collect()
    } else {
        let seats: u32 = group.iter().map(|&c| candidates[c].seats).sum();
        vec![1; seats as usize]
    }
}
