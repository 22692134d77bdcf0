//! The exact role seating (docs/rules.md, "Role queues"): which players of
//! a group can take which role seats of which team.
//!
//! A player is a bit mask over the composition's roles (the roles listed
//! on the ticket); a team's seats are a [`RoleSeats`]. Inside one team,
//! seating is a bipartite matching of players to role seats (augmenting
//! paths, roles in index order, `any` last). Across teams, a depth-first
//! search places each unit (a party with `keepTogether`, else a player) on
//! a team with room whose players still match its seats; empty teams of
//! equal room are one choice. Every search is exact up to
//! [`NODE_BUDGET`] placements; past it the answer is "no seating" (the
//! group waits a cycle) or, for the final seating, the best found so far.

use super::RoleSeats;
use smallvec::SmallVec;

/// Placements one search may try.
pub const NODE_BUDGET: u64 = 1_000_000;

/// A role index: `seats.counts.len()` stands for `any`.
pub type Role = usize;

/// Roles for `masks` within one team's `seats` (each player's role, `any`
/// as `seats.counts.len()`), or `None` when no seating exists. Players
/// take their roles in index order, `any` last, moved along augmenting
/// paths when a later player needs the seat.
pub fn assign(masks: &[u64], seats: &RoleSeats) -> Option<Vec<Role>> {
    assign_scaled(masks, seats, 1)
}

/// [`assign`] into `teams` copies of `seats` pooled (a group whose units
/// are single players: any seat of any team will do).
pub fn assign_scaled(masks: &[u64], seats: &RoleSeats, teams: u32) -> Option<Vec<Role>> {
    let mut pooled = Pooled::new(masks, seats, teams);
    let total: u64 = pooled.cap.iter().map(|c| u64::from(*c)).sum();
    if masks.len() as u64 > total {
        return None;
    }
    (0..masks.len())
        .all(|p| pooled.seat(p))
        .then_some(pooled.role_of)
}

/// How many players of `masks` at most can sit at once in `teams` copies
/// of `seats` pooled (a maximum matching: the others stand): whether some
/// of a larger set could fill a group's seats at all.
pub fn most_seated(masks: &[u64], seats: &RoleSeats, teams: u32) -> usize {
    let mut pooled = Pooled::new(masks, seats, teams);
    (0..masks.len()).filter(|&p| pooled.seat(p)).count()
}

/// A matching of players to the role seats of `teams` copies of a team's
/// seats pooled, grown one player at a time ([`augment`]).
struct Pooled<'m> {
    masks: &'m [u64],
    /// Seats per role, `any` last.
    cap: Vec<u32>,
    /// Players holding each role's seats.
    holders: Vec<Vec<usize>>,
    /// Each player's role (`any` until seated).
    role_of: Vec<Role>,
}

impl<'m> Pooled<'m> {
    fn new(masks: &'m [u64], seats: &RoleSeats, teams: u32) -> Self {
        let any = seats.counts.len();
        let mut cap: Vec<u32> = seats.counts.iter().map(|c| c * teams).collect();
        cap.push(seats.any * teams);
        Self {
            masks,
            cap,
            holders: vec![Vec::new(); any + 1],
            role_of: vec![any; masks.len()],
        }
    }

    /// Seats player `p`, moving others along an augmenting path; `false`
    /// (nothing moved) when no seat can be freed for it.
    fn seat(&mut self, p: usize) -> bool {
        let mut seen = 0u128;
        augment(
            p,
            self.masks,
            &self.cap,
            &mut self.holders,
            &mut self.role_of,
            &mut seen,
        )
    }
}

/// Finds `p` a seat, moving holders along an augmenting path.
fn augment(
    p: usize,
    masks: &[u64],
    cap: &[u32],
    holders: &mut [Vec<usize>],
    role_of: &mut [Role],
    seen: &mut u128,
) -> bool {
    let any = cap.len() - 1;
    let specific = masks[p]
        & if any >= 64 {
            u64::MAX
        } else {
            (1u64 << any) - 1
        };
    let options = || {
        let mut bits = specific;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                r
            })
        })
        .chain(std::iter::once(any))
    };
    // A free seat first: nobody moves without need.
    if let Some(r) = options().find(|&r| (holders[r].len() as u32) < cap[r]) {
        holders[r].push(p);
        role_of[p] = r;
        return true;
    }
    for r in options() {
        if *seen & (1u128 << r) != 0 || cap[r] == 0 {
            continue;
        }
        *seen |= 1u128 << r;
        for i in 0..holders[r].len() {
            let q = holders[r][i];
            if augment(q, masks, cap, holders, role_of, seen) {
                holders[r][i] = p;
                role_of[p] = r;
                return true;
            }
        }
    }
    false
}

/// Whether players of `masks` fit `teams` copies of `seats` pooled, by
/// Hall's condition: for every set `S` of roles, the players listing only
/// roles of `S` are at most the seats of `S` plus the `any` seats. No
/// allocation; `None` past 8 roles (then [`assign_scaled`] decides).
pub fn fits_pooled<I>(masks: I, seats: &RoleSeats, teams: u32) -> Option<bool>
where
    I: Iterator<Item = u64> + Clone,
{
    let r = seats.counts.len();
    if r > 8 {
        return None;
    }
    let any = u64::from(seats.any) * u64::from(teams);
    for set in 0u64..(1 << r) {
        let room = (0..r)
            .filter(|b| set & (1 << b) != 0)
            .map(|b| u64::from(seats.counts[b]) * u64::from(teams))
            .sum::<u64>()
            + any;
        let within = masks.clone().filter(|m| m & !set == 0).count() as u64;
        if within > room {
            return Some(false);
        }
    }
    Some(true)
}

/// [`fits`] over a slice of masks.
pub(super) fn fits_in(masks: &[u64], seats: &RoleSeats, teams: u32) -> bool {
    fits(masks.iter().copied(), seats, teams)
}

/// [`fits_pooled`], falling back to the matching past 8 roles.
pub(super) fn fits<I>(masks: I, seats: &RoleSeats, teams: u32) -> bool
where
    I: Iterator<Item = u64> + Clone,
{
    fits_pooled(masks.clone(), seats, teams)
        .unwrap_or_else(|| assign_scaled(&masks.collect::<Vec<_>>(), seats, teams).is_some())
}

/// Whether units (each a slice of player masks) can sit on teams of
/// `caps` players (partial fill allowed), each unit whole on one team and
/// each team's players matched to `seats`. Single-player units on teams as
/// large as `seats` are matched pooled, without the team search.
pub fn can_seat(units: &[&[u64]], caps: &[u32], seats: &RoleSeats) -> bool {
    let players: usize = units.iter().map(|u| u.len()).sum();
    let room: u64 = caps.iter().map(|c| u64::from(*c)).sum();
    if players as u64 > room {
        return false;
    }
    let full = caps.iter().all(|c| *c == seats.team_size());
    if full && units.iter().all(|u| u.len() == 1) {
        return fits(units.iter().map(|u| u[0]), seats, caps.len() as u32);
    }
    let order = biggest_first(units, &[]);
    let mut search = Search::new(units, caps, seats);
    search.first(&order, 0)
}

/// Units in placement order: larger parties first, then (with `values`)
/// higher value, then index.
fn biggest_first(units: &[&[u64]], values: &[f64]) -> SmallVec<[usize; 16]> {
    let mut order: SmallVec<[usize; 16]> = (0..units.len()).collect();
    order.sort_by(|&a, &b| {
        units[b].len().cmp(&units[a].len()).then_with(|| {
            let (va, vb) = (values.get(a), values.get(b));
            vb.partial_cmp(&va)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(&b))
        })
    });
    order
}

/// Adds (`up`) or takes away one player of mask `m` in Hall counters
/// `within` (one per role set, see [`room_of`]): every set holding all of
/// `m`'s roles. A mask with a bit past the roles is within no set (as in
/// [`fits_pooled`]).
pub fn count_within(within: &mut [u32], m: u64, up: bool) {
    let sets = within.len();
    if sets == 0 || m >= sets as u64 {
        return;
    }
    let full = sets as u64 - 1;
    let mut s = m;
    loop {
        if up {
            within[s as usize] += 1;
        } else {
            within[s as usize] -= 1;
        }
        if s == full {
            break;
        }
        s = (s + 1) | m;
    }
}

/// The state of one team search.
pub(super) struct Search<'u> {
    units: &'u [&'u [u64]],
    caps: &'u [u32],
    seats: &'u RoleSeats,
    /// Each team's players' masks so far.
    pub(super) teams: SmallVec<[SmallVec<[u64; 8]>; 4]>,
    /// Each unit's team.
    pub(super) seat: SmallVec<[usize; 16]>,
    budget: u64,
    /// Hall's condition kept per team as players join (up to 8 roles):
    /// `room[s]` the seats of role set `s` plus the `any` seats of one team.
    room: SmallVec<[u32; 16]>,
    /// `within[t * room.len() + s]`: the players of team `t` listing only
    /// roles of set `s`. Empty past 8 roles (then [`fits`] decides).
    within: SmallVec<[u32; 32]>,
}

/// The role sets' room of one team of `seats`: per set `s` of roles (a
/// bit mask), the seats of its roles plus the `any` seats, as Hall's
/// condition counts them ([`fits_pooled`]); empty past 8 roles.
pub fn room_of(seats: &RoleSeats) -> SmallVec<[u32; 16]> {
    let r = seats.counts.len();
    if r > 8 {
        return SmallVec::new();
    }
    (0u64..(1 << r))
        .map(|set| {
            (0..r)
                .filter(|b| set & (1 << b) != 0)
                .map(|b| seats.counts[b])
                .fold(seats.any, u32::saturating_add)
        })
        .collect()
}

impl<'u> Search<'u> {
    pub(super) fn new(units: &'u [&'u [u64]], caps: &'u [u32], seats: &'u RoleSeats) -> Self {
        let room = room_of(seats);
        Self {
            units,
            caps,
            seats,
            teams: (0..caps.len()).map(|_| SmallVec::new()).collect(),
            seat: SmallVec::from_elem(0, units.len()),
            budget: NODE_BUDGET,
            within: SmallVec::from_elem(0, room.len() * caps.len()),
            room,
        }
    }

    /// Adds (`up`) or takes away one player of mask `m` in team `t`'s
    /// Hall counters (see [`count_within`]).
    fn count(&mut self, t: usize, m: u64, up: bool) {
        let sets = self.room.len();
        count_within(&mut self.within[t * sets..(t + 1) * sets], m, up);
    }

    /// Whether unit `u` may join team `t`: room left and a role seating of
    /// the team with it.
    pub(super) fn fits(&mut self, u: usize, t: usize) -> bool {
        let unit = self.units[u];
        if self.teams[t].len() + unit.len() > self.caps[t] as usize {
            return false;
        }
        let sets = self.room.len();
        if sets == 0 {
            return fits(
                self.teams[t].iter().chain(unit.iter()).copied(),
                self.seats,
                1,
            );
        }
        // Hall's condition as `fits_pooled` checks it, from the team's
        // counters: only the unit's players are counted anew.
        let block = &self.within[t * sets..(t + 1) * sets];
        (0..sets).all(|s| {
            let added = unit.iter().filter(|m| *m & !(s as u64) == 0).count() as u32;
            block[s] + added <= self.room[s]
        })
    }

    pub(super) fn place(&mut self, u: usize, t: usize) {
        let unit = self.units[u];
        self.teams[t].extend_from_slice(unit);
        for &m in unit {
            self.count(t, m, true);
        }
        self.seat[u] = t;
    }

    pub(super) fn unplace(&mut self, u: usize, t: usize) {
        let unit = self.units[u];
        let len = self.teams[t].len() - unit.len();
        self.teams[t].truncate(len);
        for &m in unit {
            self.count(t, m, false);
        }
    }

    /// Whether team `t` repeats an earlier empty team of the same room (a
    /// choice already tried).
    pub(super) fn symmetric(&self, t: usize) -> bool {
        self.teams[t].is_empty()
            && (0..t).any(|e| self.teams[e].is_empty() && self.caps[e] == self.caps[t])
    }

    /// The teams' room.
    pub(super) fn caps(&self) -> &'u [u32] {
        self.caps
    }

    /// A new search over the same units, nothing placed.
    pub(super) fn fresh(&self) -> Search<'u> {
        Search::new(self.units, self.caps, self.seats)
    }

    /// Spends one placement; `false` once the budget is gone.
    pub(super) fn spend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    /// The first seating of the units in `order` from `depth` on (teams in
    /// index order); `self.seat` holds it on success.
    pub(super) fn first(&mut self, order: &[usize], depth: usize) -> bool {
        if depth == order.len() {
            return true;
        }
        if !self.spend() {
            return false;
        }
        let u = order[depth];
        for t in 0..self.caps.len() {
            if self.symmetric(t) || !self.fits(u, t) {
                continue;
            }
            self.place(u, t);
            if self.first(order, depth + 1) {
                return true;
            }
            self.unplace(u, t);
        }
        false
    }
}

#[path = "choose.rs"]
mod choose;
pub use choose::{seat_group, Choice, RoleSeating};

#[cfg(test)]
#[path = "seat_tests.rs"]
mod tests;
