//! The closeness list a walk reads (see the parent module): candidates in
//! value (or wait) order, doubly linked so that matched ones are unlinked
//! in O(1), with what a walk reads of each kept by position.

use crate::candidate::Candidate;

/// No position (an end of the list, or a candidate not in it).
pub(super) const NONE: usize = usize::MAX;

/// What a walk reads of the candidate at one position of a [`List`]: kept
/// by position, so that a walk over an anchor's neighbours reads memory in
/// order instead of one candidate here and one there (on a pool larger
/// than the caches, those scattered reads were most of a walk's time).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Slot {
    /// The candidate's MMR or ping (0 in FIFO).
    pub(super) value: f64,
    /// Its current range (0 in FIFO).
    pub(super) range: f64,
    /// Its seats.
    pub(super) seats: u32,
    /// Its segment: a list may hold several segments one after another
    /// (the partitions over `equal` rules, docs/rules.md), and a walk never
    /// leaves its anchor's. 0 in a list of one segment.
    pub(super) part: u32,
    /// Its role lists as the cycle's role table holds them
    /// ([`crate::roles::RoleTable::signature_raw`]); 0 when not filled in.
    pub(super) roles: u64,
}

/// A doubly linked list of candidates in value (or wait) order, from which
/// matched ones are unlinked in O(1).
#[derive(Debug, Default)]
pub(super) struct List {
    pub(super) order: Vec<usize>,
    /// By position: the candidate's value, range and seats.
    pub(super) slots: Vec<Slot>,
    /// Position in `order` by candidate; `NONE` when not in this list.
    pub(super) pos: Vec<usize>,
    pub(super) prev: Vec<usize>,
    pub(super) next: Vec<usize>,
    pub(super) head: usize,
    /// By position: unlinked (matched). A walk that lands on a position
    /// by search rather than by the links reads this beside the slots
    /// instead of the candidate's flag elsewhere in memory.
    pub(super) gone: Vec<bool>,
}

impl List {
    /// The list of the candidates `order` (by index into `candidates`, whose
    /// values and ranges are `values` and `ranges`, empty in FIFO).
    pub(super) fn new(
        candidates: &[Candidate],
        values: &[f64],
        ranges: &[f64],
        order: Vec<usize>,
    ) -> Self {
        let len = order.len();
        let mut pos = vec![NONE; candidates.len()];
        for (p, &c) in order.iter().enumerate() {
            pos[c] = p;
        }
        let slots = order
            .iter()
            .map(|&c| Slot {
                value: values.get(c).copied().unwrap_or(0.0),
                range: ranges.get(c).copied().unwrap_or(0.0),
                seats: candidates[c].seats,
                part: 0,
                roles: 0,
            })
            .collect();
        Self {
            order,
            slots,
            pos,
            prev: (0..len)
                .map(|p| if p == 0 { NONE } else { p - 1 })
                .collect(),
            next: (0..len)
                .map(|p| if p + 1 == len { NONE } else { p + 1 })
                .collect(),
            head: if len == 0 { NONE } else { 0 },
            gone: vec![false; len],
        }
    }

    /// From position `p` towards `links` (the list's `prev` or `next`),
    /// the first unmatched candidate's position within segment `seg`, or
    /// `NONE`. A matched candidate's link still leads to the nearest
    /// candidate unmatched when it was unlinked, every position between
    /// the two matched (and matched for good): so the chain ends, and the
    /// links of the matched positions it passed are pointed at its end
    /// (path compression), so that the next search from any of them
    /// skips the run at once. Late in a cycle most candidates are
    /// matched, and those chains were most of an indexed walk's time.
    pub(super) fn alive(
        links: &mut [usize],
        slots: &[Slot],
        gone: &[bool],
        start: usize,
        seg: u32,
    ) -> usize {
        let mut p = start;
        while p != NONE && slots[p].part == seg && gone[p] {
            p = links[p];
        }
        let end = p;
        let mut q = start;
        while q != end {
            let after = links[q];
            links[q] = end;
            q = after;
        }
        if end != NONE && slots[end].part == seg {
            end
        } else {
            NONE
        }
    }

    pub(super) fn unlink(&mut self, m: usize) {
        let p = self.pos[m];
        if p == NONE {
            return;
        }
        self.gone[p] = true;
        if self.prev[p] != NONE {
            self.next[self.prev[p]] = self.next[p];
        } else {
            self.head = self.next[p];
        }
        if self.next[p] != NONE {
            self.prev[self.next[p]] = self.prev[p];
        }
    }
}
