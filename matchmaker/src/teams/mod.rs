//! Team assignment (docs/game-modes.md#teamassignment): seating a full group into the match shape.
//!
//! A *unit* is what sits whole on one team: a party with keep-together, a
//! single player otherwise. Every function here takes the units' seat
//! counts and MMR values and returns, for each unit, the index of its team.
//!
//! - [`balanced`]: the seating with the smallest spread of team means
//!   (max mean minus min mean; for equal team sizes the same order as the
//!   spread of team sums). Exact for up to [`EXACT_LIMIT`] units by branch
//!   and bound, seeded with the snake seating so it is never worse. Beyond
//!   that, the documented heuristic: start from snake and apply improving
//!   swaps of equal-sized units between two teams until none improves
//!   (again never worse than snake).
//! - [`snake`]: sort by value descending and deal `0,1,…,k-1,k-1,…,0,0,1,…`
//!   skipping teams without room for the unit.
//! - [`shuffled`]: FIFO modes shuffle the group with the caller's RNG and
//!   deal it out the same way.
//!
//! With keep-together, a group is only a match if its units fill every team
//! exactly; [`can_pack`] decides that and is also used while a group grows.

use rand::seq::SliceRandom;
use rand::RngCore;

mod exact;
use exact::branch_and_bound;

/// Largest number of units [`balanced`] seats exactly (docs/game-modes.md#teamassignment).
pub const EXACT_LIMIT: usize = 20;

/// Search-node budget of the exact packing and balancing searches. It is
/// only reached by shapes with many teams and many parties of mixed sizes;
/// [`can_pack`] then answers "no" (the group waits a cycle) and
/// [`balanced`] keeps the best seating found, never worse than snake.
const NODE_BUDGET: u64 = 2_000_000;

/// What sits whole on one team.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Seats it takes (players).
    pub seats: u32,
    /// Sum of its members' MMR (members without MMR count 0).
    pub value_sum: f64,
}

impl Unit {
    /// Mean value per seat, the key snake sorts by.
    pub fn value(&self) -> f64 {
        self.value_sum / f64::from(self.seats.max(1))
    }
}

/// Spread of team means of a seating: `max - min` of `sum / capacity`.
pub fn spread(units: &[Unit], caps: &[u32], seating: &[usize]) -> f64 {
    let mut sums = vec![0.0; caps.len()];
    for (u, &t) in units.iter().zip(seating) {
        sums[t] += u.value_sum;
    }
    spread_of_sums(&sums, caps)
}

fn spread_of_sums(sums: &[f64], caps: &[u32]) -> f64 {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for (s, c) in sums.iter().zip(caps) {
        let mean = s / f64::from((*c).max(1));
        lo = lo.min(mean);
        hi = hi.max(mean);
    }
    if lo.is_finite() {
        hi - lo
    } else {
        0.0
    }
}

/// Whether units of `sizes` seats can fill teams of `caps` seats without
/// splitting a unit and without overflowing a team (partial fill allowed).
/// Exact bin-packing search with symmetry pruning; answers `false` if the
/// search budget runs out.
pub fn can_pack(sizes: &[u32], caps: &[u32]) -> bool {
    let total: u64 = sizes.iter().map(|s| u64::from(*s)).sum();
    let room: u64 = caps.iter().map(|c| u64::from(*c)).sum();
    if total > room {
        return false;
    }
    let largest_cap = caps.iter().copied().max().unwrap_or(0);
    if sizes.iter().any(|s| *s > largest_cap) {
        return false;
    }
    if sizes.iter().all(|s| *s == 1) {
        return true;
    }
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|a, b| sizes[*b].cmp(&sizes[*a]));
    let mut rem = caps.to_vec();
    let mut seat = vec![0; sizes.len()];
    let mut budget = NODE_BUDGET;
    pack_dfs(&order, sizes, &mut rem, &mut seat, 0, &mut budget)
}

/// A seating of units of `sizes` seats into teams of `caps` seats, partial
/// fill allowed (the team of each unit), or `None` if there is none within
/// the search budget. Used to seat the humans of a bot match and the teams
/// of a settled flexible match.
pub fn pack_partial(sizes: &[u32], caps: &[u32]) -> Option<Vec<usize>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|a, b| sizes[*b].cmp(&sizes[*a]));
    let mut rem = caps.to_vec();
    let mut seat = vec![0; sizes.len()];
    let mut budget = NODE_BUDGET;
    pack_dfs(&order, sizes, &mut rem, &mut seat, 0, &mut budget).then_some(seat)
}

fn pack_dfs(
    order: &[usize],
    sizes: &[u32],
    rem: &mut [u32],
    seat: &mut [usize],
    depth: usize,
    budget: &mut u64,
) -> bool {
    if depth == order.len() {
        return true;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let unit = order[depth];
    let size = sizes[unit];
    for t in 0..rem.len() {
        if rem[t] < size || rem[..t].contains(&rem[t]) {
            continue;
        }
        rem[t] -= size;
        seat[unit] = t;
        if pack_dfs(order, sizes, rem, seat, depth + 1, budget) {
            return true;
        }
        rem[t] += size;
    }
    false
}

/// An exact seating of units in the given order, teams tried in order,
/// or `None` if none fills every team exactly.
fn first_exact_seating(units: &[Unit], caps: &[u32], order: &[usize]) -> Option<Vec<usize>> {
    let sizes: Vec<u32> = units.iter().map(|u| u.seats).collect();
    let mut rem = caps.to_vec();
    let mut seat = vec![0; units.len()];
    let mut budget = NODE_BUDGET;
    let fits = pack_dfs(order, &sizes, &mut rem, &mut seat, 0, &mut budget);
    (fits && rem.iter().all(|r| *r == 0)).then_some(seat)
}

/// Deals units in `order` along the snake sequence of team indices,
/// skipping teams without room. Falls back to the first exact seating in
/// the same order when dealing dead-ends (possible only with parties).
fn deal(units: &[Unit], caps: &[u32], order: &[usize], snake_order: bool) -> Option<Vec<usize>> {
    let k = caps.len();
    if k == 0 {
        return None;
    }
    let sequence: Vec<usize> = if snake_order {
        (0..k).chain((0..k).rev()).collect()
    } else {
        (0..k).collect()
    };
    let mut rem = caps.to_vec();
    let mut seat = vec![0; units.len()];
    let mut cursor = 0;
    for &u in order {
        let size = units[u].seats;
        let mut placed = false;
        for _ in 0..sequence.len() {
            let t = sequence[cursor];
            cursor = (cursor + 1) % sequence.len();
            if rem[t] >= size {
                rem[t] -= size;
                seat[u] = t;
                placed = true;
                break;
            }
        }
        if !placed {
            return first_exact_seating(units, caps, order);
        }
    }
    rem.iter().all(|r| *r == 0).then_some(seat)
}

fn by_value_desc(units: &[Unit]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|a, b| {
        units[*b]
            .value()
            .total_cmp(&units[*a].value())
            .then(a.cmp(b))
    });
    order
}

/// Snake-draft seating (docs/game-modes.md#teamassignment): sort by value descending and deal
/// `0,1,…,k-1,k-1,…,0,0,1,…`, skipping teams without room. `None` if the
/// units cannot fill the teams exactly.
pub fn snake(units: &[Unit], caps: &[u32]) -> Option<Vec<usize>> {
    deal(units, caps, &by_value_desc(units), true)
}

/// FIFO seating: shuffle the units with `rng`, then deal them round-robin
/// skipping teams without room. `None` if they cannot fill the teams exactly.
pub fn shuffled(units: &[Unit], caps: &[u32], rng: &mut dyn RngCore) -> Option<Vec<usize>> {
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.shuffle(rng);
    deal(units, caps, &order, false)
}

/// Balanced seating (docs/game-modes.md#teamassignment): the smallest spread of team means. Exact up
/// to [`EXACT_LIMIT`] units, otherwise snake improved by swaps; never worse
/// than [`snake`]. `None` if the units cannot fill the teams exactly.
pub fn balanced(units: &[Unit], caps: &[u32]) -> Option<Vec<usize>> {
    if units.len() <= EXACT_LIMIT && caps.len() == 2 && units.iter().all(|u| u.seats == 1) {
        // Exact, so never worse than snake; snake only if no split exists.
        if let Some(seat) = two_teams_of_solos(units, caps) {
            return Some(seat);
        }
    }
    let start = snake(units, caps)?;
    let improved = improve_by_swaps(units, caps, start);
    if units.len() > EXACT_LIMIT {
        return Some(improved);
    }
    Some(branch_and_bound(units, caps, improved))
}

/// Hill-climbing: swap two equal-sized units of different teams while that
/// lowers the spread. Keeps every team's seat count, so exactness holds.
/// Team sums are updated in place: no allocation per trial.
fn improve_by_swaps(units: &[Unit], caps: &[u32], mut seat: Vec<usize>) -> Vec<usize> {
    let mut sums = vec![0.0; caps.len()];
    for (u, &t) in units.iter().zip(&seat) {
        sums[t] += u.value_sum;
    }
    let mut best = spread_of_sums(&sums, caps);
    for _ in 0..64 {
        let mut improved = false;
        for a in 0..units.len() {
            for b in (a + 1)..units.len() {
                let (ta, tb) = (seat[a], seat[b]);
                if ta == tb || units[a].seats != units[b].seats {
                    continue;
                }
                let delta = units[b].value_sum - units[a].value_sum;
                sums[ta] += delta;
                sums[tb] -= delta;
                let s = spread_of_sums(&sums, caps);
                if s + 1e-12 < best {
                    best = s;
                    seat.swap(a, b);
                    improved = true;
                } else {
                    sums[ta] -= delta;
                    sums[tb] += delta;
                }
            }
        }
        if !improved {
            break;
        }
    }
    seat
}

/// Exact balance of single seats into two teams, the common case (`[5,5]`
/// solos): every choice of team 0's `caps[0]` players, enumerated as bit
/// masks in lexicographic order (Gosper's hack), at most C(20, 10) of them,
/// half that for equal teams (a split and its mirror are the same).
fn two_teams_of_solos(units: &[Unit], caps: &[u32]) -> Option<Vec<usize>> {
    let n = units.len();
    let k = caps[0] as usize;
    if k == 0 || k >= n || n > 31 || k + caps[1] as usize != n {
        return None;
    }
    let values: Vec<f64> = units.iter().map(|u| u.value_sum).collect();
    let total: f64 = values.iter().sum();
    let (c0, c1) = (f64::from(caps[0]), f64::from(caps[1]));
    let mut best = f64::INFINITY;
    let mut best_mask = 0u32;
    // With equal teams a split and its mirror are one: keep unit 0 on
    // team 0 and choose its k - 1 mates among the other n - 1.
    let mirror = c0 == c1;
    let (free, pick) = if mirror { (n - 1, k - 1) } else { (n, k) };
    let mut combo: u32 = (1u32 << pick) - 1;
    let limit: u32 = 1u32 << free;
    while combo < limit {
        let mask = if mirror { (combo << 1) | 1 } else { combo };
        let mut sum = 0.0;
        let mut bits = mask;
        while bits != 0 {
            sum += values[bits.trailing_zeros() as usize];
            bits &= bits - 1;
        }
        let s = (sum / c0 - (total - sum) / c1).abs();
        if s + 1e-12 < best {
            best = s;
            best_mask = mask;
        }
        if combo == 0 {
            break;
        }
        // Next combination with the same number of bits.
        let lowest = combo & combo.wrapping_neg();
        let ripple = combo + lowest;
        combo = (((ripple ^ combo) >> 2) / lowest) | ripple;
    }
    Some(
        (0..n)
            .map(|i| usize::from(best_mask & (1 << i) == 0))
            .collect(),
    )
}

#[cfg(test)]
mod tests;
