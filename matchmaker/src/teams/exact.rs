//! The exact balanced seating: branch and bound over the units, seeded
//! with a seating that is never worse than snake.

use super::{spread, spread_of_sums, Unit, NODE_BUDGET};

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

pub(super) fn branch_and_bound(units: &[Unit], caps: &[u32], start: Vec<usize>) -> Vec<usize> {
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
