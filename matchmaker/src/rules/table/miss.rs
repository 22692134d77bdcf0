//! The nearest miss of a try on one rule (docs/rules.md, "Why a player is
//! still waiting"): which candidate a rule turned away nearest to being
//! allowed, and when the pair's own `relax` steps allow it.

use super::{Column, RuleTable};
use crate::rules::declare::Version;

impl RuleTable<'_> {
    /// Seconds until `miss`, the nearest miss of a try at `anchor` on rule
    /// `k`, is no longer one: until both the member's (for a `distance`
    /// rule the one it names, else the anchor's) and the missed
    /// candidate's own versions of the rule allow it, if nobody else
    /// arrives (docs/rules.md, "Why a player is still waiting"); `None`
    /// when either side's steps never will, and for a rule with no miss.
    pub(crate) fn unblocks_in(&self, k: usize, anchor: usize, miss: Miss) -> Option<f64> {
        match miss {
            Miss::Distance {
                of, with, distance, ..
            } => self.pair_allows_in(k, with, of, Version::Distance { max: distance }),
            Miss::Overlap { of, overlap, .. } => self.pair_allows_in(
                k,
                anchor,
                of,
                Version::Intersect {
                    min_overlap: overlap,
                },
            ),
            Miss::Apart { in_seconds, .. } => in_seconds,
            Miss::None => None,
        }
    }

    /// Seconds until both `a`'s and `b`'s own versions of rule `k` allow
    /// `miss` (see [`Rule::allows_in`]).
    fn pair_allows_in(&self, k: usize, a: usize, b: usize, miss: Version) -> Option<f64> {
        let rule = &self.rules[k];
        let (ta, tb) = (
            rule.allows_in(self.waits[a], miss)?,
            rule.allows_in(self.waits[b], miss)?,
        );
        Some(ta.max(tb))
    }

    /// The nearest miss of candidate `x` to `anchor` on rule `k`: for a
    /// `distance` rule the difference and the smaller `max`, for an
    /// `intersect` rule the overlap and the larger `minOverlap`.
    pub(crate) fn miss(&self, k: usize, anchor: usize, x: usize) -> Miss {
        let (a, c) = (self.row(anchor)[k], self.row(x)[k]);
        match &self.columns[k] {
            Column::Distance { .. } => {
                let (va, ma) = (f64::from_bits(a.a), f64::from_bits(a.b));
                let (vx, mx) = (f64::from_bits(c.a), f64::from_bits(c.b));
                Miss::Distance {
                    of: x,
                    with: anchor,
                    // Two values far apart enough overflow to infinity,
                    // which JSON cannot carry: the largest number stands.
                    distance: (va - vx).abs().min(f64::MAX),
                    max: ma.min(mx),
                }
            }
            Column::Intersect { .. } => Miss::Overlap {
                of: x,
                overlap: (a.a & c.a).count_ones(),
                min_overlap: (a.b as u32).max(c.b as u32),
            },
            Column::Equal { .. } => Miss::Apart {
                in_seconds: self.pair_allows_in(k, anchor, x, Version::Equal { off: true }),
            },
            _ => Miss::None,
        }
    }
}

/// The nearest miss of one try on one rule: the candidate turned away
/// whose pairing with the anchor is nearest to allowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Miss {
    None,
    /// `distance`: the smallest difference, of candidate `of` to member
    /// `with`, and that pair's smaller current `max`.
    Distance {
        of: usize,
        with: usize,
        distance: f64,
        max: f64,
    },
    /// `intersect`: the most values candidate `of` shares with the group,
    /// and the larger `minOverlap`.
    Overlap {
        of: usize,
        overlap: u32,
        min_overlap: u32,
    },
    /// `equal`: the soonest the anchor and a candidate with another value
    /// are both past an `off` step (`None`: never).
    Apart {
        in_seconds: Option<f64>,
    },
}

impl Miss {
    /// Whether `self` is nearer than `other`.
    pub(crate) fn nearer(self, other: Miss) -> bool {
        match (self, other) {
            (Miss::Distance { distance: a, .. }, Miss::Distance { distance: b, .. }) => a < b,
            (Miss::Overlap { overlap: a, .. }, Miss::Overlap { overlap: b, .. }) => a > b,
            (Miss::Apart { in_seconds: a }, Miss::Apart { in_seconds: b }) => match (a, b) {
                (Some(a), Some(b)) => a < b,
                (Some(_), None) => true,
                _ => false,
            },
            (_, Miss::None) => true,
            _ => false,
        }
    }
}
