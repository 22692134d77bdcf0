//! Histograms over fixed buckets, for figures kept over time (the stats
//! history): two histograms of the same bounds merge by adding counts, so a
//! minute's waits and an hour's are the same shape and percentiles of any
//! span come from the sum of its minutes.
//!
//! A histogram is its counts, one per bucket of [`WAIT_BOUNDS`] or
//! [`SPREAD_BOUNDS`] (upper bounds, inclusive) plus one last bucket for
//! anything above the last bound. Percentiles are estimated by linear
//! interpolation inside the bucket the rank falls in (the last bucket
//! answers its lower bound), so an estimate is never off by more than one
//! bucket's width.

use serde::{Deserialize, Serialize};

/// Upper bounds (seconds) of the wait-time buckets: fine where most waits
/// are (under a minute), coarse beyond.
pub const WAIT_BOUNDS: &[f64] = &[
    0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0, 40.0,
    50.0, 60.0, 75.0, 90.0, 120.0, 150.0, 180.0, 240.0, 300.0, 420.0, 600.0, 900.0, 1200.0, 1800.0,
    3600.0,
];

/// Upper bounds (MMR points) of the MMR-spread buckets.
pub const SPREAD_BOUNDS: &[f64] = &[
    0.0, 10.0, 25.0, 50.0, 75.0, 100.0, 125.0, 150.0, 200.0, 250.0, 300.0, 400.0, 500.0, 750.0,
    1000.0, 1500.0, 2000.0, 3000.0,
];

/// Counts over fixed `bounds`: `counts[i]` holds values `v` with
/// `bounds[i-1] < v <= bounds[i]`; the last count those above every bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Histogram {
    counts: Vec<u64>,
}

impl Histogram {
    /// An empty histogram over `bounds`.
    pub fn new(bounds: &[f64]) -> Self {
        Self {
            counts: vec![0; bounds.len() + 1],
        }
    }

    /// The histogram of stored `counts` over `bounds`: a list of another
    /// length (bounds changed since it was written) is padded or its tail
    /// folded into the last bucket, so old rows still merge.
    pub fn from_counts(bounds: &[f64], mut counts: Vec<u64>) -> Self {
        let len = bounds.len() + 1;
        if counts.len() > len {
            let tail: u64 = counts.drain(len - 1..).sum();
            counts.push(tail);
        }
        counts.resize(len, 0);
        Self { counts }
    }

    /// The counts, one per bucket (the last: above every bound).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Counts `value` (a NaN is not counted; a negative value goes in the
    /// first bucket).
    pub fn add(&mut self, bounds: &[f64], value: f64) {
        if value.is_nan() {
            return;
        }
        let index = bounds.partition_point(|bound| *bound < value);
        if let Some(count) = self.counts.get_mut(index) {
            *count += 1;
        }
    }

    /// Adds `other`'s counts (same bounds) to this one's.
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (count, more) in self.counts.iter_mut().zip(&other.counts) {
            *count += more;
        }
    }

    /// The estimated `p`-quantile (`p` in 0..=1) over `bounds`; `None` when
    /// empty.
    pub fn quantile(&self, bounds: &[f64], p: f64) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = (p.clamp(0.0, 1.0) * total as f64).max(1.0);
        let mut below = 0u64;
        for (index, count) in self.counts.iter().enumerate() {
            if *count == 0 {
                continue;
            }
            if (below + count) as f64 >= rank {
                let lower = if index == 0 {
                    0.0_f64.min(bounds.first().copied().unwrap_or(0.0))
                } else {
                    bounds.get(index - 1).copied().unwrap_or(0.0)
                };
                let Some(upper) = bounds.get(index).copied() else {
                    return Some(lower);
                };
                let within = (rank - below as f64) / *count as f64;
                return Some(lower + (upper - lower) * within);
            }
            below += count;
        }
        bounds.last().copied()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn values_fall_in_their_bucket_and_merge_by_adding() {
        let mut a = Histogram::new(WAIT_BOUNDS);
        a.add(WAIT_BOUNDS, 0.1);
        a.add(WAIT_BOUNDS, 0.25);
        a.add(WAIT_BOUNDS, 5000.0);
        assert_eq!(a.counts()[0], 2);
        assert_eq!(*a.counts().last().unwrap(), 1);
        let mut b = Histogram::new(WAIT_BOUNDS);
        b.add(WAIT_BOUNDS, 0.2);
        b.merge(&a);
        assert_eq!(b.counts()[0], 3);
        assert_eq!(b.total(), 4);
    }

    #[test]
    fn quantiles_are_within_one_bucket_of_the_exact_ones() {
        let mut h = Histogram::new(WAIT_BOUNDS);
        let values: Vec<f64> = (1..=1000).map(|i| f64::from(i) * 0.05).collect();
        for v in &values {
            h.add(WAIT_BOUNDS, *v);
        }
        for p in [0.5, 0.9, 0.99] {
            let exact = values[(p * 1000.0) as usize - 1];
            let estimate = h.quantile(WAIT_BOUNDS, p).unwrap();
            assert!(
                (estimate - exact).abs() <= 2.0,
                "p{p}: {estimate} vs {exact}"
            );
        }
        assert!(Histogram::new(WAIT_BOUNDS)
            .quantile(WAIT_BOUNDS, 0.5)
            .is_none());
    }

    #[test]
    fn stored_counts_of_another_length_still_merge() {
        let h = Histogram::from_counts(SPREAD_BOUNDS, vec![1; SPREAD_BOUNDS.len() + 5]);
        assert_eq!(h.counts().len(), SPREAD_BOUNDS.len() + 1);
        assert_eq!(h.total(), SPREAD_BOUNDS.len() as u64 + 5);
        let short = Histogram::from_counts(SPREAD_BOUNDS, vec![2]);
        assert_eq!(short.total(), 2);
        assert_eq!(short.counts().len(), SPREAD_BOUNDS.len() + 1);
    }
}
