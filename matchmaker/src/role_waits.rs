//! Per role seat, the players matched in it and their waits (docs/rules.md,
//! "Role waits"): what the stats history keeps per minute in modes with
//! `composition`, so a studio sees "tank: 20 s, damage: 3 min".
//!
//! A [`RoleWaits`] is a map from role (one of the composition's roles, or
//! `any`) to a [`RoleFigure`]: players seated in that role and their waits
//! (seconds from `queuedAt` to the matching cycle) over
//! [`WAIT_BOUNDS`], so two minutes merge by adding counts and percentiles of
//! any span come from the sum of its minutes (as the minute's wait
//! histogram, `crate::histogram`). Stored as JSON:
//! `{"tank": {"matched": 3, "waits": [0, 1, …]}}`.

use crate::cycle::ProposedMatch;
use crate::histogram::{Histogram, WAIT_BOUNDS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One role's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleFigure {
    /// Players seated in the role.
    pub matched: u64,
    /// Their waits (seconds), over [`WAIT_BOUNDS`].
    pub waits: Histogram,
}

impl Default for RoleFigure {
    fn default() -> Self {
        Self {
            matched: 0,
            waits: Histogram::new(WAIT_BOUNDS),
        }
    }
}

impl RoleFigure {
    /// The estimated `p`-quantile of the waits (seconds, `p` in 0..=1);
    /// `None` without waits.
    pub fn wait_quantile(&self, p: f64) -> Option<f64> {
        self.waits.quantile(WAIT_BOUNDS, p)
    }
}

/// Per role, its [`RoleFigure`]; empty in modes without `composition`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RoleWaits(BTreeMap<String, RoleFigure>);

impl RoleWaits {
    /// Counts one player seated in `role` after `wait` seconds.
    pub fn add(&mut self, role: &str, wait: f64) {
        let figure = match self.0.get_mut(role) {
            Some(figure) => figure,
            None => self.0.entry(role.to_owned()).or_default(),
        };
        figure.matched += 1;
        figure.waits.add(WAIT_BOUNDS, wait);
    }

    /// Counts every player of `matched` that took a role seat (players of
    /// a mode without `composition` have none: nothing is counted).
    pub fn add_match(&mut self, matched: &ProposedMatch) {
        for player in matched.teams.iter().flat_map(|t| &t.players) {
            if let Some(role) = &player.role {
                self.add(role, player.wait_seconds);
            }
        }
    }

    /// The figures of `matches`' players.
    pub fn of_matches<'a>(matches: impl IntoIterator<Item = &'a ProposedMatch>) -> Self {
        let mut out = Self::default();
        for m in matches {
            out.add_match(m);
        }
        out
    }

    /// Adds `other`'s figures to these, role by role.
    pub fn merge(&mut self, other: &RoleWaits) {
        for (role, figure) in &other.0 {
            let mine = self.0.entry(role.clone()).or_default();
            mine.matched += figure.matched;
            mine.waits.merge(&figure.waits);
        }
    }

    /// These figures with each histogram read over [`WAIT_BOUNDS`] (a
    /// stored one of another length, written before the bounds changed,
    /// padded or folded as [`Histogram::from_counts`] does).
    pub fn normalized(mut self) -> Self {
        for figure in self.0.values_mut() {
            let counts = figure.waits.counts().to_vec();
            figure.waits = Histogram::from_counts(WAIT_BOUNDS, counts);
        }
        self
    }

    /// Whether no player was counted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The figures by role, in role order.
    pub fn roles(&self) -> &BTreeMap<String, RoleFigure> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn counts_and_waits_add_up_by_role_and_merge() {
        let mut a = RoleWaits::default();
        a.add("tank", 20.0);
        a.add("damage", 170.0);
        a.add("damage", 190.0);
        let mut b = RoleWaits::default();
        b.add("damage", 180.0);
        b.merge(&a);
        assert_eq!(b.roles()["tank"].matched, 1);
        assert_eq!(b.roles()["damage"].matched, 3);
        // All three damage waits fall in the (150, 180] and (180, 240]
        // buckets: the median lies in the first of them.
        let p50 = b.roles()["damage"].wait_quantile(0.5).unwrap();
        assert!((150.0..=180.0).contains(&p50), "{p50}");
        let p50 = b.roles()["tank"].wait_quantile(0.5).unwrap();
        assert!((15.0..=20.0).contains(&p50), "{p50}");
        let json = serde_json::to_string(&b).unwrap();
        let back: RoleWaits = serde_json::from_str(&json).unwrap();
        assert_eq!(back.normalized(), b);
        assert!(RoleWaits::default().is_empty());
    }
}
