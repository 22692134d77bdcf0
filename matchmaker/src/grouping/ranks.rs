//! Where an anchor's key falls in each bucket of the bucket index
//! (`indexed.rs`), read from counts instead of searched.

use super::List;

/// Positions of the reference list (the list of the partitions, or of
/// every candidate) per block of counts.
const BLOCK: usize = 32;

/// Where the anchor's key falls in each segment of its partition: the
/// candidates of a segment ahead of the anchor by closeness are those of
/// its bucket ahead of the anchor in the reference list, which orders the
/// partition's candidates as the segments do (value, then wait order). So
/// a count of the bucket's candidates before the anchor's position there,
/// from a block's counts and a scan of at most `BLOCK` bytes, replaces a
/// binary search per bucket (each of its steps a cache miss).
#[derive(Debug, Default)]
pub(super) struct Ranks {
    /// The reference list's index in `Grouper::lists`.
    pub(super) list: usize,
    /// By position in the reference list, the bucket of the candidate there.
    bucket: Vec<u8>,
    /// Per block of `BLOCK` positions, per bucket, how many positions
    /// before the block hold that bucket.
    counts: Vec<u32>,
    /// Per segment, its start less the candidates of its bucket in the
    /// partitions before (which the counts include).
    base: Vec<usize>,
}

impl Ranks {
    /// The ranks over reference list `list` of `lists` (the partitions'
    /// list, or the list of every candidate: it orders each partition's
    /// candidates as the segments do), `bucket(c)` being candidate `c`'s
    /// bucket of `buckets`, `starts` the segments' starts.
    pub(super) fn build(
        list: usize,
        lists: &[List],
        bucket: impl Fn(usize) -> u32,
        buckets: usize,
        starts: &[usize],
    ) -> Self {
        let by_position: Vec<u8> = lists[list].order.iter().map(|&c| bucket(c) as u8).collect();
        let mut counts = Vec::with_capacity((by_position.len() / BLOCK + 1) * buckets);
        let mut run = vec![0u32; buckets];
        for (p, &b) in by_position.iter().enumerate() {
            if p % BLOCK == 0 {
                counts.extend_from_slice(&run);
            }
            run[b as usize] += 1;
        }
        let segments = starts.len().saturating_sub(1);
        let mut seen = vec![0usize; buckets];
        let mut base = vec![0usize; segments];
        for (seg, at) in base.iter_mut().enumerate() {
            let b = seg % buckets;
            *at = starts[seg] - seen[b];
            seen[b] += starts[seg + 1] - starts[seg];
        }
        Self {
            list,
            bucket: by_position,
            counts,
            base,
        }
    }

    /// The position in segment `seg` (bucket `b`) of the first candidate
    /// past the one at position `p` of the reference list.
    pub(super) fn position(&self, buckets: usize, seg: usize, b: usize, p: usize) -> usize {
        let block = p / BLOCK;
        let before = self.counts[block * buckets + b] as usize;
        let near = self.bucket[block * BLOCK..p]
            .iter()
            .filter(|x| **x as usize == b)
            .count();
        self.base[seg] + before + near
    }
}
