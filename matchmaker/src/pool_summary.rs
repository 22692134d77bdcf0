//! What a cycle saw of its pool, for a live view (a studio's console):
//! searches and candidates, how many wait for each reason, and histograms
//! of the pool's MMR and latency. Computed from the cycle's own snapshot and
//! outcome, so nobody reads the whole pool again to show it.

use crate::cycle::CycleOutcome;
use crate::search::Search;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bins of a pool histogram at most.
pub const MAX_BINS: usize = 24;

/// A histogram of equal-width bins: `counts[i]` holds values in
/// `[start + i*width, start + (i+1)*width)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bins {
    /// Lower edge of the first bin.
    pub start: f64,
    /// Width of every bin.
    pub width: f64,
    /// Values per bin.
    pub counts: Vec<u64>,
}

impl Bins {
    /// Bins over `values` with a round width (a multiple of `step`) so that
    /// at most [`MAX_BINS`] cover them; `None` when there are no values.
    pub fn of(values: &[f64], step: f64) -> Option<Self> {
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let (min, max) = finite.fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
        let start = (min / step).floor() * step;
        let span = (max - start).max(step);
        let width = ((span / MAX_BINS as f64 / step).ceil() * step).max(step);
        let bins = ((max - start) / width).floor() as usize + 1;
        let mut counts = vec![0u64; bins.min(MAX_BINS + 1)];
        for v in values.iter().filter(|v| v.is_finite()) {
            let index = (((v - start) / width).floor() as usize).min(counts.len() - 1);
            if let Some(count) = counts.get_mut(index) {
                *count += 1;
            }
        }
        Some(Self {
            start,
            width,
            counts,
        })
    }
}

/// The pool as one cycle saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSummary {
    /// Searches in the pool.
    pub searching: u64,
    /// Candidates (complete, eligible parties).
    pub candidates: u64,
    /// Searches matched by the cycle.
    pub matched: u64,
    /// Searches left waiting, by waiting-reason code.
    pub waiting_reasons: BTreeMap<String, u64>,
    /// Searches left waiting with `RULE_NOT_MET`, by the rule named
    /// (docs/rules.md); absent without rules.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub waiting_by_rule: BTreeMap<String, u64>,
    /// Per rule over attributes, the candidates it turned away in this
    /// cycle (docs/rules.md); absent without rules.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rule_turned_away: BTreeMap<String, u64>,
    /// Searches left waiting by each role they listed (docs/rules.md, "Role
    /// queues"); absent without `composition`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub waiting_by_role: BTreeMap<String, u64>,
    /// MMR of the searches that have one (bins of 25 points or more).
    pub mmr: Option<Bins>,
    /// Latency of the searches that have one (milliseconds; the measured
    /// ping, else the best region's; bins of 10 ms or more).
    pub latency_ms: Option<Bins>,
}

impl PoolSummary {
    /// The summary of a cycle over `pool` that came to `outcome`.
    pub fn of(pool: &[Search], outcome: &CycleOutcome) -> Self {
        let mut waiting_reasons = BTreeMap::new();
        let mut waiting_by_rule = BTreeMap::new();
        for waiting in &outcome.waiting {
            *waiting_reasons
                .entry(waiting.reason.code().as_str().to_owned())
                .or_insert(0) += 1;
            if let crate::reasons::WaitingReason::RuleNotMet { rule, .. } = &waiting.reason {
                *waiting_by_rule.entry(rule.clone()).or_insert(0) += 1;
            }
        }
        let mmrs: Vec<f64> = pool.iter().filter_map(|s| s.mmr).collect();
        let latencies: Vec<f64> = pool
            .iter()
            .filter_map(|s| {
                s.ping_ms.or_else(|| {
                    s.latencies
                        .as_ref()
                        .and_then(|l| l.values().copied().reduce(f64::min))
                })
            })
            .collect();
        let matched = outcome
            .matches
            .iter()
            .map(|m| m.teams.iter().map(|t| t.players.len() as u64).sum::<u64>())
            .sum();
        Self {
            searching: outcome.pool_size as u64,
            candidates: outcome.candidates as u64,
            matched,
            waiting_reasons,
            waiting_by_rule,
            rule_turned_away: outcome
                .rule_turned_away
                .iter()
                .map(|(k, v)| (k.clone(), u64::from(*v)))
                .collect(),
            waiting_by_role: outcome
                .waiting_by_role
                .iter()
                .map(|(k, v)| (k.clone(), u64::from(*v)))
                .collect(),
            mmr: Bins::of(&mmrs, 25.0),
            latency_ms: Bins::of(&latencies, 10.0),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bins_cover_every_value_with_round_widths() {
        let values: Vec<f64> = (0..1000).map(|i| 1000.0 + f64::from(i)).collect();
        let bins = Bins::of(&values, 25.0).unwrap();
        assert_eq!(bins.start, 1000.0);
        assert_eq!(bins.width % 25.0, 0.0);
        assert!(bins.counts.len() <= MAX_BINS + 1);
        assert_eq!(bins.counts.iter().sum::<u64>(), 1000);
        assert!(Bins::of(&[], 25.0).is_none());
        let one = Bins::of(&[1500.0], 25.0).unwrap();
        assert_eq!(one.counts, vec![1]);
    }
}
