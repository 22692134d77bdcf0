//! The region rule of a cycle (docs/regions.md): a group is a match only if one
//! region has every member within that member's own current ceiling.
//!
//! Built once per cycle: region names are interned (sorted, so an index
//! order is the name order), each candidate gets its latency to every
//! region (a party's is its worst member's; a region missing from any
//! member's map is unreachable) and the bit set of regions within its own
//! ceiling (from its own wait: a newcomer never gets another's widened
//! ceiling). The grouper keeps the running intersection of a group's bit
//! sets and refuses a joiner that would empty it; the region of a formed
//! group is the feasible one with the lowest worst-member latency, ties by
//! lowest mean over the players, then by name.

use crate::candidate::Candidate;
use crate::latency::Regions;
use crate::reasons::WaitingReason;
use crate::search::Search;
use arcstr::ArcStr;

/// Per-cycle region data of every candidate.
#[derive(Debug, Clone)]
pub struct RegionTable {
    names: Vec<ArcStr>,
    words: usize,
    /// `lat[c * names.len() + r]`: candidate `c`'s worst-member latency to
    /// region `r` (milliseconds), infinite when unreachable.
    lat: Vec<f64>,
    /// `sum[c * names.len() + r]`: the sum of candidate `c`'s members'
    /// latencies to region `r` (for the mean of a match).
    sum: Vec<f64>,
    ceiling: Vec<f64>,
    /// `masks[c * words ..]`: regions within candidate `c`'s ceiling.
    masks: Vec<u64>,
    /// The block (for the unblock hint of `NO_COMMON_REGION`).
    config: Regions,
    /// Each candidate's wait (seconds).
    waits: Vec<f64>,
    /// Every wanted search's map as (region index, milliseconds), search
    /// after search; `spans[i]` is search `i`'s range in it.
    entries: Vec<(u32, f64)>,
    spans: Vec<(u32, u32)>,
}

impl RegionTable {
    /// The table of `candidates` (longest-waiting first) whose waits are
    /// `waits` (seconds), under `regions`.
    pub fn build(
        regions: &Regions,
        pool: &[Search],
        candidates: &[Candidate],
        waits: &[f64],
    ) -> Self {
        // One pass over the maps, in pool order (the order the searches
        // sit in memory, so reading them streams rather than jumping from
        // candidate to candidate): names interned in first-seen order, each
        // entry kept as (interned id, milliseconds), search by search. A map
        // is sorted by name, and so is `known` (the names interned so far,
        // with their ids): a map's names are found by walking both in step,
        // a few short comparisons per entry and no hashing.
        let mut wanted = vec![false; pool.len()];
        for c in candidates {
            for &i in &c.searches {
                wanted[i] = true;
            }
        }
        let mut known: Vec<(&str, usize)> = Vec::new();
        let mut entries: Vec<(u32, f64)> = Vec::with_capacity(candidates.len() * 8);
        let mut spans: Vec<(u32, u32)> = vec![(0, 0); pool.len()];
        for (i, search) in pool.iter().enumerate() {
            if !wanted[i] {
                continue;
            }
            let from = entries.len() as u32;
            let mut at = 0;
            for (name, ms) in search.latencies.iter().flat_map(|l| l.iter()) {
                let name = name.as_str();
                // Most maps name the same regions: the next known name is
                // usually the one (an equality test, lengths first).
                if at < known.len() && known[at].0 != name {
                    while at < known.len() && known[at].0 < name {
                        at += 1;
                    }
                }
                if at == known.len() || known[at].0 != name {
                    // Not ahead of the walk: known elsewhere, or new.
                    at = match known.binary_search_by(|(n, _)| (*n).cmp(name)) {
                        Ok(k) => k,
                        Err(k) => {
                            known.insert(k, (name, known.len()));
                            k
                        }
                    };
                }
                entries.push((known[at].1 as u32, *ms));
                at += 1;
            }
            spans[i] = (from, entries.len() as u32);
        }
        let names = known;
        let mut remap = vec![0u32; names.len()];
        for (sorted, (_, first)) in names.iter().enumerate() {
            remap[*first] = sorted as u32;
        }
        // Entries carry the sorted region index from here on.
        for entry in &mut entries {
            entry.0 = remap[entry.0 as usize];
        }
        let r = names.len();
        let words = r.div_ceil(64).max(1);
        // A region no member names stays unreachable (infinite).
        let mut lat = vec![f64::INFINITY; candidates.len() * r];
        let mut sum = vec![0.0; candidates.len() * r];
        // Solo candidates, the common case, in pool order: each search's
        // entries are read as they lie in memory and written to its
        // candidate's row, so no read waits on another (reading them in
        // candidate order jumped through memory twice per search).
        let mut owner = vec![u32::MAX; pool.len()];
        for (c, cand) in candidates.iter().enumerate() {
            if let [i] = cand.searches[..] {
                owner[i] = c as u32;
            }
        }
        for (i, &c) in owner.iter().enumerate() {
            if c == u32::MAX {
                continue;
            }
            let c = c as usize;
            let (from, to) = spans[i];
            for &(k, ms) in &entries[from as usize..to as usize] {
                lat[c * r + k as usize] = ms;
                sum[c * r + k as usize] = ms;
            }
        }
        // Parties: the worst member's latency, unreachable where any
        // member lacks the region.
        let mut seen = vec![0u32; r];
        for (c, cand) in candidates.iter().enumerate() {
            if cand.searches.len() < 2 {
                continue;
            }
            let row = &mut lat[c * r..(c + 1) * r];
            let sums = &mut sum[c * r..(c + 1) * r];
            row.iter_mut().for_each(|v| *v = f64::NEG_INFINITY);
            seen.iter_mut().for_each(|s| *s = 0);
            for &i in &cand.searches {
                let (from, to) = spans[i];
                for &(k, ms) in &entries[from as usize..to as usize] {
                    let k = k as usize;
                    row[k] = row[k].max(ms);
                    sums[k] += ms;
                    seen[k] += 1;
                }
            }
            let members = cand.searches.len() as u32;
            for k in 0..r {
                if seen[k] < members {
                    row[k] = f64::INFINITY;
                }
            }
        }
        let mut masks = vec![0u64; candidates.len() * words];
        let mut ceiling = Vec::with_capacity(candidates.len());
        for (c, &wait) in waits.iter().enumerate().take(candidates.len()) {
            let cap = regions.ceiling(wait);
            ceiling.push(cap);
            for (k, &ms) in lat[c * r..(c + 1) * r].iter().enumerate() {
                if ms <= cap {
                    masks[c * words + k / 64] |= 1 << (k % 64);
                }
            }
        }
        Self {
            names: names.into_iter().map(|(n, _)| ArcStr::from(n)).collect(),
            words,
            lat,
            sum,
            ceiling,
            masks,
            config: regions.clone(),
            waits: waits.to_vec(),
            entries,
            spans,
        }
    }

    /// The regions within candidate `c`'s ceiling, as bit words.
    pub fn mask(&self, c: usize) -> &[u64] {
        &self.masks[c * self.words..(c + 1) * self.words]
    }

    /// Regions of the pool (interned names).
    pub fn region_count(&self) -> usize {
        self.names.len()
    }

    /// Whether region `r` is within candidate `c`'s ceiling.
    pub fn reaches(&self, c: usize, r: usize) -> bool {
        self.masks[c * self.words + r / 64] >> (r % 64) & 1 == 1
    }

    /// The regions within `c`'s ceiling, its lowest latency first.
    pub fn regions_by_latency(&self, c: usize) -> Vec<usize> {
        let mut rs: Vec<usize> = (0..self.names.len())
            .filter(|&r| self.reaches(c, r))
            .collect();
        rs.sort_by(|a, b| self.latency(c, *a).total_cmp(&self.latency(c, *b)));
        rs
    }

    /// Candidate `c`'s current ceiling (milliseconds).
    pub fn ceiling(&self, c: usize) -> f64 {
        self.ceiling[c]
    }

    /// Whether `c` shares a region with a group whose intersection is `group`.
    pub fn compatible(&self, group: &[u64], c: usize) -> bool {
        group.iter().zip(self.mask(c)).any(|(a, b)| a & b != 0)
    }

    /// Narrows the intersection `group` to the regions of `c` too.
    pub fn narrow(&self, group: &mut [u64], c: usize) {
        let words = self.words;
        for (a, b) in group
            .iter_mut()
            .zip(&self.masks[c * words..(c + 1) * words])
        {
            *a &= *b;
        }
    }

    fn latency(&self, c: usize, r: usize) -> f64 {
        self.lat[c * self.names.len() + r]
    }

    /// The name of region index `r`.
    pub fn name(&self, r: usize) -> &ArcStr {
        &self.names[r]
    }

    /// Pool search `i`'s own latency to region index `r` (milliseconds),
    /// `None` when its map lacks it (or it was not a candidate's).
    pub fn search_latency(&self, i: usize, r: usize) -> Option<f64> {
        let (from, to) = *self.spans.get(i)?;
        self.entries[from as usize..to as usize]
            .iter()
            .find(|(k, _)| *k as usize == r)
            .map(|(_, ms)| *ms)
    }

    /// Solo candidate `c`'s latency to region index `r` (milliseconds),
    /// `None` when unreachable; for a party, its worst member's.
    pub fn candidate_latency(&self, c: usize, r: usize) -> Option<f64> {
        Some(self.latency(c, r)).filter(|ms| ms.is_finite())
    }

    /// The region of a formed `group` (candidate indices): among the regions
    /// within every member's ceiling, the lowest worst-member latency, ties
    /// the lowest mean over the players, then the name. `None` when no
    /// region is feasible (a pass never forms such a group). The region as
    /// an index ([`RegionTable::name`] gives its name).
    pub fn choose(&self, candidates: &[Candidate], group: &[usize]) -> Option<usize> {
        let mut mask = self.mask(*group.first()?).to_vec();
        for &c in &group[1..] {
            self.narrow(&mut mask, c);
        }
        let mut best: Option<(f64, f64, usize)> = None;
        for r in (0..self.names.len()).filter(|r| mask[r / 64] >> (r % 64) & 1 == 1) {
            let worst = group
                .iter()
                .map(|&c| self.latency(c, r))
                .fold(f64::NEG_INFINITY, f64::max);
            let (mut sum, mut n) = (0.0, 0.0);
            for &c in group {
                sum += self.sum[c * self.names.len() + r];
                n += candidates[c].searches.len() as f64;
            }
            let mean = sum / f64::max(n, 1.0);
            // Names are sorted: on equal latencies the first region stays.
            if best.is_none_or(|(w, m, _)| worst < w || (worst == w && mean < m)) {
                best = Some((worst, mean, r));
            }
        }
        best.map(|(_, _, r)| r)
    }

    /// `NO_COMMON_REGION` for `anchor` over the candidates `tried` (its
    /// in-range partners, anchor included): the region with the lowest
    /// worst latency among them, that latency, and the anchor's ceiling.
    pub fn reason(&self, anchor: usize, tried: &[usize]) -> WaitingReason {
        let mut best: Option<(f64, usize)> = None;
        for r in 0..self.names.len() {
            let worst = tried
                .iter()
                .chain(std::iter::once(&anchor))
                .map(|&c| self.latency(c, r))
                .fold(f64::NEG_INFINITY, f64::max);
            if worst.is_finite() && best.is_none_or(|(w, _)| worst < w) {
                best = Some((worst, r));
            }
        }
        WaitingReason::NoCommonRegion {
            best_region: best.map(|(_, r)| self.names[r].to_string()),
            worst_latency_ms: best.map(|(w, _)| w),
            ceiling_ms: self.ceiling[anchor],
            unblocks_in_seconds: best.and_then(|(w, _)| {
                crate::hints::seconds_until_ceiling(&self.config, self.waits[anchor], w)
            }),
        }
    }
}
