//! Which of the candidates a try met its second look chooses among: of
//! candidates alike in every respect, only as many as a match holds.
//!
//! Forty damage players met before the parties that carry the tanks would
//! otherwise fill the choices, and the search would try them four at a
//! time before a group with a party. But candidates alike in seats and
//! roles may still differ in what a group needs of them: a trio blocked by
//! nobody is not one blocked by the solo the match needs. So a candidate
//! beyond the first `size / seats` of its kind is dropped only when as
//! many kept ones are alike it in every respect: seats and role lists,
//! every rule's value and version, the players it avoids and that nobody
//! of the look avoids it, its regions, and on closeness whom of the look
//! it fits. Any group with a dropped candidate then has a kept one alike
//! it outside the group to take its place, so the cap loses no match.

use super::kind_of;
use crate::grouping::Grouper;
use crate::tolerance::fits;
use smallvec::SmallVec;

impl Grouper<'_> {
    /// Drops from `pool` (the candidates a second look of `anchor` met,
    /// nearest first) those beyond `size / seats` alike in every respect
    /// (see the module's comment), keeping the nearest.
    pub(in crate::grouping) fn keep_few_alike(
        &self,
        anchor: usize,
        pool: &mut Vec<usize>,
        size: u32,
    ) {
        let roles = self.role_table();
        let kinds: Vec<Option<u64>> = pool
            .iter()
            .map(|&c| kind_of(roles, self.candidates, c))
            .collect();
        let mut keep = vec![true; pool.len()];
        let mut counts: SmallVec<[(u64, u32); 16]> = SmallVec::new();
        let mut sameness: Option<Sameness> = None;
        for i in 0..pool.len() {
            let Some(kind) = kinds[i] else {
                continue;
            };
            let most = (size / self.candidates[pool[i]].seats.max(1)).max(1);
            let at = match counts.iter().position(|(k, _)| *k == kind) {
                Some(at) => at,
                None => {
                    counts.push((kind, 0));
                    counts.len() - 1
                }
            };
            if counts[at].1 >= most {
                let same = sameness.get_or_insert_with(|| Sameness::new(self, anchor, pool));
                let alike = (0..i)
                    .filter(|&j| keep[j] && kinds[j] == Some(kind) && same.alike(self, pool, j, i))
                    .take(most as usize)
                    .count();
                if alike >= most as usize {
                    keep[i] = false;
                    continue;
                }
            }
            counts[at].1 += 1;
        }
        let mut i = 0;
        pool.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
}

/// What tells two candidates of a look apart beyond their kind, computed
/// once a kind passes its cap.
struct Sameness {
    /// Players anyone of the look avoids, hashed and sorted.
    avoided: Vec<u64>,
    /// Whether closeness counts (not FIFO).
    closeness: bool,
    /// Words of a closeness row.
    words: usize,
    /// Per pool position, `words` words: bit `k` set when it fits the
    /// `k`-th of the anchor (bit 0) and the pool on closeness; computed
    /// when `done`.
    rows: Vec<u64>,
    done: Vec<bool>,
}

impl Sameness {
    fn new(g: &Grouper<'_>, anchor: usize, pool: &[usize]) -> Self {
        let avoided = match g.rules.table() {
            Some(t) => {
                let mut look = Vec::with_capacity(pool.len() + 1);
                look.push(anchor);
                look.extend_from_slice(pool);
                t.avoided_by(&look)
            }
            None => Vec::new(),
        };
        let closeness = !g.fifo;
        let words = if closeness {
            (pool.len() + 1).div_ceil(64)
        } else {
            0
        };
        Self {
            avoided,
            closeness,
            words,
            rows: vec![0; words * pool.len()],
            done: vec![false; if closeness { pool.len() } else { 0 }],
        }
    }

    /// Whether `pool[j]` and `pool[i]`, of one kind, are alike in every
    /// other respect.
    fn alike(&mut self, g: &Grouper<'_>, pool: &[usize], j: usize, i: usize) -> bool {
        let (x, y) = (pool[j], pool[i]);
        if g.rules
            .table()
            .is_some_and(|t| !t.interchangeable(x, y, &self.avoided))
            || g.regions.is_some_and(|t| t.mask(x) != t.mask(y))
        {
            return false;
        }
        if !self.closeness {
            return true;
        }
        for p in [i, j] {
            if !self.done[p] {
                self.fill_row(g, pool, p);
            }
        }
        let w = self.words;
        let (a, b) = (
            &self.rows[j * w..(j + 1) * w],
            &self.rows[i * w..(i + 1) * w],
        );
        // Each other's bits aside: the two fit each other alike.
        (0..w).all(|k| {
            let mut differ = a[k] ^ b[k];
            for bit in [j + 1, i + 1] {
                if bit / 64 == k {
                    differ &= !(1 << (bit % 64));
                }
            }
            differ == 0
        })
    }

    /// Computes `pool[p]`'s closeness row.
    fn fill_row(&mut self, g: &Grouper<'_>, pool: &[usize], p: usize) {
        let x = pool[p];
        let row = &mut self.rows[p * self.words..(p + 1) * self.words];
        // The look kept only those that fit the anchor.
        row[0] = 1;
        for (k, &z) in pool.iter().enumerate() {
            if fits(g.values[z], g.ranges[z], g.values[x], g.ranges[x]) {
                row[(k + 1) / 64] |= 1 << ((k + 1) % 64);
            }
        }
        self.done[p] = true;
    }
}
