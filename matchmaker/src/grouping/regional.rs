//! The region rule inside group building (docs/regions.md): a joiner must share a
//! region with the group within every member's own ceiling. With regions,
//! a group grows in each region its anchor reaches, nearest first.

use super::{Attempt, Grouper, List};
use crate::reasons::WaitingReason;
use crate::regions::RegionTable;

impl<'a> Grouper<'a> {
    /// Adds the region rule: a joiner must share a region within every
    /// member's ceiling with the group (docs/regions.md).
    pub fn with_regions(mut self, regions: Option<&'a RegionTable>) -> Self {
        self.regions = regions;
        if let (Some(t), false) = (regions, self.fifo) {
            for r in 0..t.region_count() {
                let order: Vec<usize> = self.lists[0]
                    .order
                    .iter()
                    .copied()
                    .filter(|&c| t.reaches(c, r))
                    .collect();
                self.lists
                    .push(List::new(self.candidates, self.values, self.ranges, order));
            }
        }
        self
    }

    /// Starts a try's region intersection at `anchor`'s regions.
    pub(super) fn start_regions(&mut self, anchor: usize) {
        self.region_blocked.clear();
        if let Some(t) = self.regions {
            self.group_regions.clear();
            self.group_regions.extend_from_slice(t.mask(anchor));
        }
    }

    /// Whether `x` shares a region with the group; narrows the group's
    /// regions when `admit` and it does. A refused `x` is remembered.
    pub(super) fn region_fits(&mut self, x: usize) -> bool {
        match self.regions {
            None => true,
            Some(t) if t.compatible(&self.group_regions, x) => true,
            Some(_) => {
                if self.region_blocked.len() < 64 {
                    self.region_blocked.push(x);
                }
                false
            }
        }
    }

    pub(super) fn region_join(&mut self, x: usize) {
        if let Some(t) = self.regions {
            t.narrow(&mut self.group_regions, x);
        }
    }

    /// `NO_COMMON_REGION` of a try that refused partners for their regions.
    pub(super) fn region_reason(&self, anchor: usize, group: &[usize]) -> Option<WaitingReason> {
        let t = self.regions?;
        if self.region_blocked.is_empty() {
            return None;
        }
        let tried: Vec<usize> = group.iter().chain(&self.region_blocked).copied().collect();
        Some(t.reason(anchor, &tried))
    }

    /// With regions: grows the group in each region the anchor reaches
    /// (its nearest first), where every candidate is within its ceiling,
    /// and keeps the first full group. When none fills, one walk over all
    /// candidates with the region check gives the reason (`NO_COMMON_REGION`
    /// when regions kept in-range partners apart), and the largest group
    /// tried is kept for `found`.
    pub(super) fn grow_regional(
        &mut self,
        t: &RegionTable,
        anchor: usize,
        caps: &[u32],
        size: u32,
    ) -> Attempt {
        let mut best: Option<Attempt> = None;
        for r in t.regions_by_latency(anchor) {
            let attempt = self.grow_close(anchor, caps, size, 1 + r);
            if attempt.short.is_none() {
                return attempt;
            }
            if best.as_ref().is_none_or(|b| attempt.seats > b.seats) {
                best = Some(attempt);
            }
        }
        let mut global = self.grow_close(anchor, caps, size, 0);
        if global.short.is_none() {
            return global;
        }
        if let Some(b) = best.filter(|b| b.seats > global.seats) {
            global.group = b.group;
            global.seats = b.seats;
        }
        global
    }
}
