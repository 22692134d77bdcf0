//! The final role seating of a formed group (docs/rules.md, "Role
//! queues"): among the seatings that give every team exactly its role
//! seats, the one `teamAssignment` picks (docs/game-modes.md#teamassignment).

use super::{assign, biggest_first, fits, Role, Search};
use crate::roles::RoleSeats;
use crate::teams::{self, Unit};
use rand::seq::SliceRandom;
use rand::RngCore;

/// How the seating is chosen among the role-valid ones.
pub enum Choice<'r> {
    /// Smallest spread of team means, exact within the search budget.
    Balanced,
    /// Units by value, highest first, dealt in snake order.
    Snake,
    /// FIFO: units shuffled with the caller's RNG, dealt round-robin.
    Shuffled(&'r mut dyn RngCore),
}

/// A group's role seating: each unit's team and each unit's members' roles
/// (indices into the composition's roles, `any` as `seats.counts.len()`).
#[derive(Debug, Clone, PartialEq)]
pub struct RoleSeating {
    /// Team index per unit.
    pub team_of: Vec<usize>,
    /// Per unit, its members' roles in member order.
    pub roles: Vec<Vec<Role>>,
}

/// Seats `units` (each a slice of its members' role masks; `values` their
/// MMR sums) on teams of exactly `caps` players, every team's players in
/// `seats`, chosen by `choice`; `None` when no such seating exists (within
/// the search budget).
pub fn seat_group(
    units: &[&[u64]],
    values: &[f64],
    caps: &[u32],
    seats: &RoleSeats,
    choice: Choice<'_>,
) -> Option<RoleSeating> {
    let players: usize = units.iter().map(|u| u.len()).sum();
    if players as u64 != caps.iter().map(|c| u64::from(*c)).sum::<u64>() {
        return None;
    }
    let mut search = Search::new(units, caps, seats);
    let team_of = match choice {
        Choice::Balanced => {
            let order = biggest_first(units, values);
            // Per depth, the sums of the r smallest and r largest seat
            // values of the units left: the bound of `balanced`.
            let per_seat =
                |u: usize| values.get(u).copied().unwrap_or(0.0) / units[u].len().max(1) as f64;
            let mut low = Vec::with_capacity(order.len() + 1);
            let mut high = Vec::with_capacity(order.len() + 1);
            for d in 0..=order.len() {
                let mut left: Vec<f64> = order[d..]
                    .iter()
                    .flat_map(|&u| std::iter::repeat_n(per_seat(u), units[u].len()))
                    .collect();
                left.sort_by(f64::total_cmp);
                let sums = |it: &mut dyn Iterator<Item = &f64>| {
                    std::iter::once(0.0)
                        .chain(it.scan(0.0, |acc, v| {
                            *acc += v;
                            Some(*acc)
                        }))
                        .collect::<Vec<f64>>()
                };
                low.push(sums(&mut left.iter()));
                high.push(sums(&mut left.iter().rev()));
            }
            let mut best = Best {
                spread: f64::INFINITY,
                seat: None,
                sums: vec![0.0; caps.len()],
                low,
                high,
            };
            // The balance without roles (exact up to 20 units) is the
            // answer when it happens to give every team its role seats;
            // else it seeds the bound when valid.
            let plain: Vec<Unit> = units
                .iter()
                .zip(values)
                .map(|(u, v)| Unit {
                    seats: u.len() as u32,
                    value_sum: *v,
                })
                .collect();
            if let Some(seat) =
                teams::balanced(&plain, caps).filter(|s| role_valid(units, caps, seats, s))
            {
                if units.len() <= teams::EXACT_LIMIT {
                    return finish(units, caps, seats, seat);
                }
                best.spread = teams::spread(&plain, caps, &seat);
                best.seat = Some(seat);
            }
            balanced(&mut search, &order, 0, values, &mut best);
            best.seat?
        }
        Choice::Snake => {
            let mut order: Vec<usize> = (0..units.len()).collect();
            let per_seat =
                |u: usize| values.get(u).copied().unwrap_or(0.0) / units[u].len().max(1) as f64;
            order.sort_by(|&a, &b| per_seat(b).total_cmp(&per_seat(a)).then(a.cmp(&b)));
            deal(&mut search, &order, true)?
        }
        Choice::Shuffled(rng) => {
            let mut order: Vec<usize> = (0..units.len()).collect();
            order.shuffle(rng);
            deal(&mut search, &order, false)?
        }
    };
    finish(units, caps, seats, team_of)
}

/// Whether `team_of` gives every team a role seating.
fn role_valid(units: &[&[u64]], caps: &[u32], seats: &RoleSeats, team_of: &[usize]) -> bool {
    (0..caps.len()).all(|t| {
        let masks = units
            .iter()
            .zip(team_of)
            .filter(|(_, &at)| at == t)
            .flat_map(|(u, _)| u.iter().copied());
        fits(masks, seats, 1)
    })
}

/// The roles of a chosen seating, team by team.
fn finish(
    units: &[&[u64]],
    caps: &[u32],
    seats: &RoleSeats,
    team_of: Vec<usize>,
) -> Option<RoleSeating> {
    let mut roles: Vec<Vec<Role>> = units.iter().map(|u| vec![0; u.len()]).collect();
    for t in 0..caps.len() {
        let members: Vec<usize> = (0..units.len()).filter(|&u| team_of[u] == t).collect();
        let masks: Vec<u64> = members
            .iter()
            .flat_map(|&u| units[u].iter().copied())
            .collect();
        let mut given = assign(&masks, seats)?.into_iter();
        for &u in &members {
            for slot in roles[u].iter_mut() {
                *slot = given.next()?;
            }
        }
    }
    Some(RoleSeating { team_of, roles })
}

struct Best {
    spread: f64,
    seat: Option<Vec<usize>>,
    sums: Vec<f64>,
    /// Per depth, the sums of the `r` smallest (`low[d][r]`) and largest
    /// (`high[d][r]`) seat values of the units left.
    low: Vec<Vec<f64>>,
    high: Vec<Vec<f64>>,
}

impl Best {
    /// A lower bound of the spread of any completion at `depth`: each
    /// team's mean ends between its sum plus the smallest and plus the
    /// largest seat values left, as many as its open seats (units relaxed
    /// into single seats, as in `teams::exact`).
    fn bound(&self, search: &Search<'_>, depth: usize) -> f64 {
        let (mut max_low, mut min_high) = (f64::NEG_INFINITY, f64::INFINITY);
        for (t, cap) in search.caps().iter().enumerate() {
            let open = cap.saturating_sub(search.teams[t].len() as u32) as usize;
            let c = f64::from((*cap).max(1));
            let r = open.min(self.low[depth].len() - 1);
            let lo = (self.sums[t] + self.low[depth][r]) / c;
            let hi = (self.sums[t] + self.high[depth][r]) / c;
            max_low = max_low.max(lo);
            min_high = min_high.min(hi);
        }
        (max_low - min_high).max(0.0)
    }
}

/// Every role-valid seating (within the budget), keeping the one with the
/// smallest spread of team means; ties keep the first found.
fn balanced(
    search: &mut Search<'_>,
    order: &[usize],
    depth: usize,
    values: &[f64],
    best: &mut Best,
) {
    if depth == order.len() {
        let spread = spread(&best.sums, search.caps());
        if spread + 1e-12 < best.spread {
            best.spread = spread;
            best.seat = Some(search.seat.to_vec());
        }
        return;
    }
    if !search.spend() || best.bound(search, depth) + 1e-12 >= best.spread {
        return;
    }
    let u = order[depth];
    let value = values.get(u).copied().unwrap_or(0.0);
    for t in 0..search.caps().len() {
        if search.symmetric(t) || !search.fits(u, t) {
            continue;
        }
        search.place(u, t);
        best.sums[t] += value;
        balanced(search, order, depth + 1, values, best);
        best.sums[t] -= value;
        search.unplace(u, t);
    }
}

/// Spread of team means: `max - min` of `sum / cap`.
fn spread(sums: &[f64], caps: &[u32]) -> f64 {
    let means = sums
        .iter()
        .zip(caps)
        .map(|(s, c)| s / f64::from((*c).max(1)));
    let (lo, hi) = means.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| {
        (lo.min(m), hi.max(m))
    });
    if lo.is_finite() {
        hi - lo
    } else {
        0.0
    }
}

/// Deals units in `order` along the snake (or round-robin) sequence of
/// teams, skipping teams without room or whose roles the unit would break;
/// falls back to the first role-valid seating in the same order when
/// dealing dead-ends.
fn deal(search: &mut Search<'_>, order: &[usize], snake: bool) -> Option<Vec<usize>> {
    let k = search.caps().len();
    let sequence: Vec<usize> = if snake {
        (0..k).chain((0..k).rev()).collect()
    } else {
        (0..k).collect()
    };
    if sequence.is_empty() {
        return None;
    }
    let mut cursor = 0;
    let mut dealt = true;
    for &u in order {
        let mut placed = false;
        for _ in 0..sequence.len() {
            let t = sequence[cursor];
            cursor = (cursor + 1) % sequence.len();
            if search.fits(u, t) {
                search.place(u, t);
                placed = true;
                break;
            }
        }
        if !placed {
            dealt = false;
            break;
        }
    }
    if dealt {
        return Some(search.seat.to_vec());
    }
    let mut fresh = search.fresh();
    fresh.first(order, 0).then(|| fresh.seat.to_vec())
}

impl RoleSeating {
    /// The role seats this seating leaves empty on each of `teams` teams
    /// of `seats` (roles in index order, then `any` as
    /// `seats.counts.len()`), for the bots of a bot match (docs/rules.md,
    /// "Role queues"). The seating's team indices are `live` teams:
    /// `live[i]` is the `i`-th team with humans; a team without humans
    /// leaves all its seats empty.
    pub fn empty_seats(&self, seats: &RoleSeats, teams: usize, live: &[usize]) -> Vec<Vec<Role>> {
        let any = seats.counts.len();
        let mut left: Vec<Vec<u32>> = (0..teams)
            .map(|_| seats.counts.iter().copied().chain([seats.any]).collect())
            .collect();
        for (u, roles) in self.roles.iter().enumerate() {
            let Some(team) = self.team_of.get(u).and_then(|&i| live.get(i)) else {
                continue;
            };
            for &r in roles {
                if let Some(n) = left.get_mut(*team).and_then(|t| t.get_mut(r.min(any))) {
                    *n = n.saturating_sub(1);
                }
            }
        }
        left.into_iter()
            .map(|team| {
                team.into_iter()
                    .enumerate()
                    .flat_map(|(r, n)| std::iter::repeat_n(r, n as usize))
                    .collect()
            })
            .collect()
    }
}
