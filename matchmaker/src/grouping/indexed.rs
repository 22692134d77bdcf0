//! An index over the most selective `distance` rule (docs/rules.md,
//! "Cost"), so that a walk by closeness skips the candidates that rule
//! would turn away instead of reading each one.
//!
//! The candidates of each partition (over the `equal` rules) are cut into
//! buckets of the rule's value (say levels 1-10, 11-20, …), each a segment
//! of one list in closeness order. An anchor walks only the buckets its
//! own `max` reaches, merging their segments by closeness: it meets the
//! same candidates in the same order as the walk over its whole partition
//! would, less those outside its reach, which every rule check refuses.
//! So a try that fills forms exactly the group the partition walk forms.
//!
//! That fast walk is quiet (it counts no rule's refusals): a try it
//! leaves short is run again the full way, which says why the anchor
//! waits and counts what each rule turned away (`ruleTurnedAway` counts
//! the tries that stayed short).

use super::heads::{nearest, Head};
use super::ranks::Ranks;
use super::{Attempt, Grouper, List, Slot, NONE};
use crate::rules::RuleTable;
use crate::tolerance::fits;
use smallvec::SmallVec;
use std::cmp::Ordering;

/// Most buckets per partition: beyond that a bucket is widened.
const MAX_BUCKETS: f64 = 64.0;
/// Slack on bucket bounds, above the rule checks' own 1e-9.
const EDGE: f64 = 1e-6;

/// The bucket index of one cycle.
#[derive(Debug)]
pub(super) struct Index {
    /// Index in `Grouper::lists` of the list of every segment.
    list: usize,
    /// The `distance` rule indexed: its index, values and each
    /// candidate's current `max`.
    rule: usize,
    values: Vec<f64>,
    maxes: Vec<f64>,
    low: f64,
    width: f64,
    buckets: u32,
    /// Start of each segment (`partition * buckets + bucket`) in the list's
    /// positions, and one past the last.
    starts: Vec<usize>,
    /// Where an anchor's key falls in each bucket of its partition, read
    /// without a search (see [`Ranks`]).
    ranks: Ranks,
}

impl Index {
    /// Whether candidate `x`'s value lies out of `anchor`'s own window on
    /// the indexed rule, where every group of the anchor refuses it.
    pub(super) fn outside(&self, anchor: usize, x: usize) -> bool {
        let (v, a, max) = (self.values[x], self.values[anchor], self.maxes[anchor]);
        v < a - max - 1e-9 || v > a + max + 1e-9
    }

    /// The indexed rule.
    pub(super) fn rule(&self) -> usize {
        self.rule
    }

    fn bucket(&self, v: f64) -> u32 {
        let b = ((v - self.low) / self.width).floor();
        if b <= 0.0 {
            0
        } else {
            (b as u32).min(self.buckets - 1)
        }
    }
}

/// The rule [`choose`] picks: its index, values and each candidate's
/// current `max`, its lowest value, the buckets' width and their count.
struct Chosen {
    rule: usize,
    values: Vec<f64>,
    maxes: Vec<f64>,
    low: f64,
    width: f64,
    buckets: u32,
}

/// The `distance` rule whose reach is the smallest share of its values'
/// spread; `None` when no rule would narrow a walk (no `distance` rule, a
/// reach of half the spread or more, or values that are not all numbers).
fn choose(t: &RuleTable<'_>) -> Option<Chosen> {
    // (share, rule, lowest, highest, reach) of the best.
    let mut best: Option<(f64, usize, f64, f64, f64)> = None;
    for (k, values, maxes) in t.distance_columns() {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        let reach = maxes.iter().copied().fold(f64::INFINITY, f64::min);
        if !(lo.is_finite() && hi.is_finite() && reach.is_finite())
            || values.iter().any(|v| v.is_nan())
        {
            continue;
        }
        let share = (2.0 * reach) / (hi - lo).max(f64::MIN_POSITIVE);
        if share < 0.5 && best.is_none_or(|b| share < b.0) {
            best = Some((share, k, lo, hi, reach));
        }
    }
    let (_, rule, low, high, reach) = best?;
    let (_, values, maxes) = t.distance_columns().find(|c| c.0 == rule)?;
    // Half the narrowest reach: a window of width 2 * max spans four or
    // five buckets, most of whose candidates it holds.
    let width = (reach / 2.0)
        .max((high - low) / MAX_BUCKETS)
        .max(f64::MIN_POSITIVE);
    let buckets = (((high - low) / width).floor() as u32)
        .saturating_add(1)
        .min(MAX_BUCKETS as u32 + 1);
    Some(Chosen {
        rule,
        values: values.to_vec(),
        maxes: maxes.to_vec(),
        low,
        width,
        buckets,
    })
}

impl<'a> Grouper<'a> {
    /// Builds the bucket index (see the module's comment) over list 0's
    /// order; nothing when no `distance` rule narrows a walk.
    pub(super) fn build_index(&mut self, t: &RuleTable<'_>) {
        let Some(Chosen {
            rule,
            values,
            maxes,
            low,
            width,
            buckets,
        }) = choose(t)
        else {
            return;
        };
        let mut index = Index {
            list: self.lists.len(),
            rule,
            values,
            maxes,
            low,
            width,
            buckets,
            starts: Vec::new(),
            ranks: Ranks::default(),
        };
        let segments = t.partitions() as usize * buckets as usize;
        let segment = |c: usize| {
            t.partition(c) as usize * buckets as usize + index.bucket(index.values[c]) as usize
        };
        let mut orders: Vec<Vec<usize>> = vec![Vec::new(); segments];
        for &c in &self.lists[0].order {
            orders[segment(c)].push(c);
        }
        let mut starts = Vec::with_capacity(segments + 1);
        let mut at = 0;
        for o in &orders {
            starts.push(at);
            at += o.len();
        }
        starts.push(at);
        let order: Vec<usize> = orders.into_iter().flatten().collect();
        let mut list = List::new(self.candidates, self.values, self.ranges, order);
        for (slot, &c) in list.slots.iter_mut().zip(&list.order) {
            slot.part = segment(c) as u32;
        }
        index.ranks = Ranks::build(
            self.rules.partition_list().unwrap_or(0),
            &self.lists,
            |c| index.bucket(index.values[c]),
            buckets as usize,
            &starts,
        );
        index.starts = starts;
        self.lists.push(list);
        self.rules.index = Some(index);
    }

    /// The index's list, when there is one.
    pub(super) fn index_list(&self) -> Option<usize> {
        self.rules.index.as_ref().map(|i| i.list)
    }

    /// A try over the anchor's buckets only (see the module's comment):
    /// the full group, or `None` when it stays short (or there is no
    /// index), for the caller to try the full way.
    pub(super) fn grow_indexed(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
    ) -> Option<Attempt> {
        let index = self.rules.index.take()?;
        let attempt = self.walk_indexed(&index, anchor, caps, size);
        self.rules.index = Some(index);
        attempt
    }

    fn walk_indexed(
        &mut self,
        ix: &Index,
        anchor: usize,
        caps: &[u32],
        size: u32,
    ) -> Option<Attempt> {
        let mut list = std::mem::take(&mut self.lists[ix.list]);
        let attempt = self.walk_segments(ix, &mut list, anchor, caps, size);
        self.lists[ix.list] = list;
        attempt
    }

    fn walk_segments(
        &mut self,
        ix: &Index,
        list: &mut List,
        anchor: usize,
        caps: &[u32],
        size: u32,
    ) -> Option<Attempt> {
        let List {
            order,
            slots,
            pos,
            prev,
            next,
            gone,
            ..
        } = list;
        let (order, slots, gone) = (&*order, &*slots, &*gone);
        // The nearest unmatched position from `p` within segment `seg`,
        // leftwards and rightwards (see `List::alive`).
        let back = |prev: &mut Vec<usize>, p: usize, seg: usize| {
            List::alive(prev, slots, gone, p, seg as u32)
        };
        let on = |next: &mut Vec<usize>, p: usize, seg: usize| {
            List::alive(next, slots, gone, p, seg as u32)
        };
        let (va, ra) = (self.values[anchor], self.ranges[anchor]);
        let (level, reach) = (ix.values[anchor], ix.maxes[anchor]);
        if !(level.is_finite() && reach.is_finite()) {
            return None;
        }
        let anchor_pos = pos[anchor];
        let anchor_rank = self.lists[ix.ranks.list].pos[anchor];
        let own = slots[anchor_pos].part as usize;
        let first = own - own % ix.buckets as usize;
        let (b_lo, b_hi) = (
            ix.bucket(level - reach - EDGE),
            ix.bucket(level + reach + EDGE),
        );
        // Per bucket reached, the nearest unmatched candidate on each side
        // of the anchor by closeness (value, then wait order, as the list),
        // each with its key read once.
        let head = |p: usize| Head {
            value: slots[p].value,
            order: order[p],
            pos: p,
            bucket: slots[p].part % ix.buckets,
        };
        let mut lefts: SmallVec<[Head; 8]> = SmallVec::new();
        let mut rights: SmallVec<[Head; 8]> = SmallVec::new();
        let push = |heads: &mut SmallVec<[Head; 8]>, p: usize| {
            if p != NONE {
                heads.push(head(p));
            }
        };
        for b in b_lo..=b_hi {
            let seg = first + b as usize;
            let (s, e) = (ix.starts[seg], ix.starts[seg + 1]);
            if seg == own {
                push(&mut lefts, back(prev, prev[anchor_pos], seg));
                push(&mut rights, on(next, next[anchor_pos], seg));
                continue;
            }
            if s == e {
                continue;
            }
            // First position whose key is past the anchor's.
            let q = ix
                .ranks
                .position(ix.buckets as usize, seg, b as usize, anchor_rank);
            if q > s {
                push(&mut lefts, back(prev, q - 1, seg));
            }
            if q < e {
                push(&mut rights, on(next, q, seg));
            }
        }

        let mut group = vec![anchor];
        let mut joined: Vec<(f64, f64)> = Vec::with_capacity(size as usize);
        self.start_group(anchor);
        self.rules.start(anchor);
        let mut seats = self.candidates[anchor].seats;
        // The buckets the heads lie in: narrowed as the group's window is.
        let mut reached = (b_lo, b_hi);
        // Each side's nearest head: the largest key on the left, the
        // smallest on the right (the last and the first of equal keys),
        // found again only on the side a step changed.
        let nearest_left =
            |lefts: &[Head]| nearest(lefts, |b, h| b.cmp_key(h) != Ordering::Greater);
        let nearest_right =
            |rights: &[Head]| nearest(rights, |b, h| b.cmp_key(h) == Ordering::Greater);
        let mut left = nearest_left(&lefts);
        let mut right = nearest_right(&rights);
        while seats < size && !self.roles.exhausted {
            let (take_left, (i, h)) = match (left, right) {
                (None, None) => break,
                (None, Some(r)) => (false, r),
                (Some(l), None) => (true, l),
                (Some(l), Some(r)) => {
                    let (dl, dr) = ((l.1.value - va).abs(), (r.1.value - va).abs());
                    if dl < dr || (dl == dr && self.run_top(l.1.order, anchor) < r.1.order) {
                        (true, l)
                    } else {
                        (false, r)
                    }
                }
            };
            if (h.value - va).abs() > ra + 1e-9 {
                // Nobody further on this side can fit the anchor.
                if take_left {
                    lefts.clear();
                    left = None;
                } else {
                    rights.clear();
                    right = None;
                }
                continue;
            }
            let p = h.pos;
            let seg = slots[p].part as usize;
            let (heads, next_p) = if take_left {
                (&mut lefts, back(prev, prev[p], seg))
            } else {
                (&mut rights, on(next, next[p], seg))
            };
            if next_p == NONE {
                heads.swap_remove(i);
            } else {
                heads[i] = head(next_p);
            }
            if take_left {
                left = nearest_left(&lefts);
            } else {
                right = nearest_right(&rights);
            }
            let Slot {
                value: vx,
                range: rx,
                seats: joiner,
                ..
            } = slots[p];
            if !fits(va, ra, vx, rx) || !joined.iter().all(|&(vm, rm)| fits(vm, rm, vx, rx)) {
                continue;
            }
            let x = h.order;
            if !self.rules.admits(x) {
                continue;
            }
            if self.admits(caps, size, seats, joiner, x).is_ok() {
                self.rules.join(x);
                group.push(x);
                joined.push((vx, rx));
                self.add_member(x, joiner);
                seats += joiner;
                // The group's window narrows: drop the buckets it left
                // (the heads all lie within the buckets reached so far, so
                // an unchanged reach drops none).
                if let Some((lo, hi)) = self.rules.window(ix.rule) {
                    let now = (ix.bucket(lo - EDGE), ix.bucket(hi + EDGE));
                    if now != reached {
                        reached = now;
                        let inside = |h: &Head| h.bucket >= now.0 && h.bucket <= now.1;
                        lefts.retain(|h| inside(h));
                        rights.retain(|h| inside(h));
                        left = nearest_left(&lefts);
                        right = nearest_right(&rights);
                    }
                }
            }
        }
        (seats == size).then_some(Attempt {
            group,
            seats,
            short: None,
        })
    }

    /// On a tie in distance between the two sides, the walk over the whole
    /// partition compares its own left head, which may be a candidate this
    /// walk skips: the first of the unmatched candidates left of the
    /// anchor with `x`'s value, which has the highest wait order among
    /// them (the list orders equal values by wait order). Taking the left
    /// side exactly when that one's wait order is below the right head's
    /// gives the whole walk's order.
    fn run_top(&mut self, x: usize, anchor: usize) -> usize {
        let anchor_value = self.values[anchor];
        let list = &mut self.lists[self.rules.partition_list().unwrap_or(0)];
        let starts = &self.rules.partition_starts;
        let p = list.pos[x];
        let part = list.slots[p].part as usize;
        let value = list.slots[p].value;
        // The run ends at the first key past `value`'s, or at the anchor.
        let bound = if value == anchor_value {
            (value, anchor)
        } else {
            (value, usize::MAX)
        };
        // The run is short next to the partition: gallop from `p` to a
        // position past it, then search between the last two steps.
        let end = starts[part + 1];
        let before = |q: usize| (list.slots[q].value, list.order[q]) < bound;
        let (mut q, mut step) = (p, 1);
        while q + step < end && before(q + step) {
            q += step;
            step *= 2;
        }
        // The first position not before the bound lies in
        // [q, min(q + step, end)]: `q` is `p` or before it, and `q + step`
        // is past the segment or not before it.
        let mut hi = (q + step).min(end);
        while q < hi {
            let mid = q + (hi - q) / 2;
            if before(mid) {
                q = mid + 1;
            } else {
                hi = mid;
            }
        }
        match List::alive(&mut list.prev, &list.slots, &list.gone, q - 1, part as u32) {
            NONE => x,
            top => list.order[top],
        }
    }
}

#[cfg(test)]
#[path = "indexed_tests.rs"]
mod tests;
