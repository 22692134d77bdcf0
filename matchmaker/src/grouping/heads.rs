//! The heads of an indexed walk (`indexed.rs`): per bucket the anchor
//! reaches, the nearest unmatched candidate on each side, compared by the
//! list's closeness order.

use std::cmp::Ordering;

/// A walk's nearest unmatched candidate in one segment on one side of
/// the anchor: its position, closeness key (value, then wait order) and
/// bucket, read once rather than at each comparison.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    pub(super) value: f64,
    pub(super) order: usize,
    pub(super) pos: usize,
    pub(super) bucket: u32,
}

impl Head {
    /// The list's order of two candidates (value, then wait order; equal
    /// when a value is not a number).
    pub(super) fn cmp_key(&self, other: &Head) -> Ordering {
        (self.value, self.order)
            .partial_cmp(&(other.value, other.order))
            .unwrap_or(Ordering::Equal)
    }
}

/// The head `heads` holds that no later one `replaces` (its index and
/// itself); `None` when there is none.
pub(super) fn nearest(
    heads: &[Head],
    replaces: impl Fn(&Head, &Head) -> bool,
) -> Option<(usize, Head)> {
    let mut best: Option<(usize, Head)> = None;
    for (i, h) in heads.iter().enumerate() {
        match best {
            Some((_, b)) if !replaces(&b, h) => {}
            _ => best = Some((i, *h)),
        }
    }
    best
}
