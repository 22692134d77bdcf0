//! FIFO group building: candidates taken in wait order, first fit by seats
//! (and by region, when the mode has regions).

use super::{Attempt, Grouper, NONE};
use crate::reasons::WaitingReason;

impl Grouper<'_> {
    /// Grows a FIFO group around `anchor` towards `size` seats.
    pub(super) fn grow_fifo(&mut self, anchor: usize, caps: &[u32], size: u32) -> Attempt {
        let mut group = vec![anchor];
        self.sizes.clear();
        self.sizes.push(self.candidates[anchor].seats);
        self.start_regions(anchor);
        let mut seats = self.candidates[anchor].seats;
        let mut cursor = self.lists[0].head;
        while cursor != NONE && seats < size {
            let x = self.lists[0].order[cursor];
            cursor = self.lists[0].next[cursor];
            if x == anchor {
                continue;
            }
            let joiner = self.candidates[x].seats;
            if seats + joiner <= size && !self.region_fits(x) {
                continue;
            }
            if self.admits(caps, size, seats, joiner).is_ok() {
                self.region_join(x);
                group.push(x);
                self.sizes.push(joiner);
                seats += joiner;
            }
        }
        let short = (seats != size).then(|| {
            self.region_reason(anchor, &group)
                .unwrap_or_else(|| WaitingReason::NoExactSeating {
                    completing_party_sizes: crate::hints::completing_party_sizes(&self.sizes, caps),
                })
        });
        Attempt {
            group,
            seats,
            short,
        }
    }
}
