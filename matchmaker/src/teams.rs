//! Team assignment (SPEC 5.6): seating a full group into the match shape.
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

/// Largest number of units [`balanced`] seats exactly (SPEC 5.6).
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

/// Snake-draft seating (SPEC 5.6): sort by value descending and deal
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

/// Balanced seating (SPEC 5.6): the smallest spread of team means. Exact up
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

/// Branch and bound over exact seatings, units placed biggest first.
///
/// Bound: relax the units not yet placed into single seats carrying their
/// per-seat value. A team with `r` seats left ends with at least its sum
/// plus the `r` smallest such seat values and at most its sum plus the `r`
/// largest, so `max(lowest possible mean) - min(highest possible mean)` is
/// a lower bound of the final spread. `small[d][r]` and `large[d][r]` hold
/// those sums for the units from depth `d` on. When every unit is a single
/// seat, the order is by value, so those sums come from one prefix-sum
/// array (`prefix`) with no table at all.
struct Bnb<'a> {
    units: &'a [Unit],
    caps: &'a [u32],
    order: Vec<usize>,
    prefix: Vec<f64>,
    small: Vec<Vec<f64>>,
    large: Vec<Vec<f64>>,
    sums: Vec<f64>,
    rem: Vec<u32>,
    seat: Vec<usize>,
    best: f64,
    best_seat: Vec<usize>,
    budget: u64,
}

impl Bnb<'_> {
    /// Sums of the `r` smallest and the `r` largest seat values left at `depth`.
    fn extremes(&self, depth: usize, r: usize) -> (f64, f64) {
        if self.small.is_empty() {
            let n = self.order.len();
            let r = r.min(n - depth);
            let p = &self.prefix;
            (p[n] - p[n - r], p[depth + r] - p[depth])
        } else {
            let r = r.min(self.small[depth].len() - 1);
            (self.small[depth][r], self.large[depth][r])
        }
    }

    fn lower_bound(&self, depth: usize) -> f64 {
        let mut max_lo = f64::NEG_INFINITY;
        let mut min_hi = f64::INFINITY;
        for t in 0..self.caps.len() {
            let cap = f64::from(self.caps[t].max(1));
            let (small, large) = self.extremes(depth, self.rem[t] as usize);
            max_lo = max_lo.max((self.sums[t] + small) / cap);
            min_hi = min_hi.min((self.sums[t] + large) / cap);
        }
        (max_lo - min_hi).max(0.0)
    }

    fn search(&mut self, depth: usize) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        if depth == self.order.len() {
            let s = spread_of_sums(&self.sums, self.caps);
            if s + 1e-12 < self.best {
                self.best = s;
                self.best_seat = self.seat.clone();
            }
            return;
        }
        if self.lower_bound(depth) + 1e-12 >= self.best {
            return;
        }
        let u = self.order[depth];
        let size = self.units[u].seats;
        for t in 0..self.caps.len() {
            if self.rem[t] < size {
                continue;
            }
            // Two teams in the same state are interchangeable: try one.
            let duplicate = (0..t).any(|p| {
                self.caps[p] == self.caps[t]
                    && self.rem[p] == self.rem[t]
                    && self.sums[p] == self.sums[t]
            });
            if duplicate {
                continue;
            }
            self.rem[t] -= size;
            self.sums[t] += self.units[u].value_sum;
            self.seat[u] = t;
            self.search(depth + 1);
            self.rem[t] += size;
            self.sums[t] -= self.units[u].value_sum;
        }
    }
}

fn branch_and_bound(units: &[Unit], caps: &[u32], start: Vec<usize>) -> Vec<usize> {
    // Big parties first (fewest choices), then high values first.
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|a, b| {
        units[*b]
            .seats
            .cmp(&units[*a].seats)
            .then(units[*b].value().total_cmp(&units[*a].value()))
            .then(a.cmp(b))
    });
    let best = spread(units, caps, &start);
    if best <= 1e-12 {
        return start;
    }
    let n = order.len();
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    for &u in &order {
        prefix.push(prefix[prefix.len() - 1] + units[u].value_sum);
    }
    let all_single = units.iter().all(|u| u.seats == 1);
    let mut small = Vec::new();
    let mut large = Vec::new();
    for d in (0..=n).filter(|_| !all_single) {
        let mut seats: Vec<f64> = order[d..]
            .iter()
            .flat_map(|&u| std::iter::repeat_n(units[u].value(), units[u].seats as usize))
            .collect();
        seats.sort_by(f64::total_cmp);
        let prefix = |values: &mut dyn Iterator<Item = f64>| {
            let mut acc = vec![0.0];
            for v in values {
                acc.push(acc[acc.len() - 1] + v);
            }
            acc
        };
        small.push(prefix(&mut seats.iter().copied()));
        large.push(prefix(&mut seats.iter().rev().copied()));
    }
    let mut bnb = Bnb {
        units,
        caps,
        order,
        prefix,
        small,
        large,
        sums: vec![0.0; caps.len()],
        rem: caps.to_vec(),
        seat: vec![0; units.len()],
        best,
        best_seat: start,
        budget: NODE_BUDGET,
    };
    bnb.search(0);
    bnb.best_seat
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solos(values: &[f64]) -> Vec<Unit> {
        values
            .iter()
            .map(|v| Unit {
                seats: 1,
                value_sum: *v,
            })
            .collect()
    }

    fn team_sums(units: &[Unit], k: usize, seat: &[usize]) -> Vec<f64> {
        let mut sums = vec![0.0; k];
        for (u, t) in units.iter().zip(seat) {
            sums[*t] += u.value_sum;
        }
        sums
    }

    #[test]
    fn four_solos_are_not_stacked() {
        // Case from the field: 2000, 1900, 1100, 1000 in [2,2] split 3000 vs 3000.
        let units = solos(&[2000.0, 1900.0, 1100.0, 1000.0]);
        let seat = balanced(&units, &[2, 2]).unwrap();
        let mut sums = team_sums(&units, 2, &seat);
        sums.sort_by(f64::total_cmp);
        assert_eq!(sums, vec![3000.0, 3000.0]);
    }

    #[test]
    fn snake_deals_in_snake_order() {
        let units = solos(&[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
        let seat = snake(&units, &[3, 3]).unwrap();
        // 0,1,1,0,0,1
        assert_eq!(seat, vec![0, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn snake_handles_uneven_shapes() {
        let units = solos(&[4.0, 3.0, 2.0, 1.0]);
        let seat = snake(&units, &[1, 3]).unwrap();
        assert_eq!(seat, vec![0, 1, 1, 1]);
    }

    #[test]
    fn three_duos_never_fill_three_v_three() {
        assert!(!can_pack(&[2, 2, 2], &[3, 3]));
        assert!(can_pack(&[2, 2, 1, 1], &[3, 3]));
        let units = vec![
            Unit {
                seats: 2,
                value_sum: 2.0,
            },
            Unit {
                seats: 2,
                value_sum: 2.0,
            },
            Unit {
                seats: 2,
                value_sum: 2.0,
            },
        ];
        assert!(balanced(&units, &[3, 3]).is_none());
        assert!(snake(&units, &[3, 3]).is_none());
    }

    #[test]
    fn duo_sits_on_the_team_of_three() {
        let units = vec![
            Unit {
                seats: 2,
                value_sum: 4000.0,
            },
            Unit {
                seats: 1,
                value_sum: 1000.0,
            },
            Unit {
                seats: 1,
                value_sum: 1000.0,
            },
        ];
        for seat in [
            balanced(&units, &[1, 3]).unwrap(),
            snake(&units, &[1, 3]).unwrap(),
        ] {
            assert_eq!(seat[0], 1, "the duo must sit on the team of three");
        }
    }

    #[test]
    fn beyond_the_exact_limit_is_never_worse_than_snake() {
        let values: Vec<f64> = (0..24).map(|i| f64::from((i * 37) % 101) * 13.0).collect();
        let units = solos(&values);
        let caps = [6, 6, 6, 6];
        let b = balanced(&units, &caps).unwrap();
        let s = snake(&units, &caps).unwrap();
        assert!(spread(&units, &caps, &b) <= spread(&units, &caps, &s));
    }
}
