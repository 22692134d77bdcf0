//! FIFO group building: candidates taken in wait order, first fit by seats
//! (and by region, when the mode has regions).

use super::{Attempt, Grouper, NONE};
use crate::reasons::WaitingReason;

impl Grouper<'_> {
    /// Grows a FIFO group around `anchor` towards `size` seats.
    /// `l` is the list walked: every candidate (0) or the anchor's
    /// partition over the `equal` rules (docs/rules.md).
    pub(super) fn grow_fifo(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
        l: usize,
    ) -> Attempt {
        let mut group = vec![anchor];
        self.start_group(anchor);
        self.start_regions(anchor);
        self.rules.start(anchor);
        let mut seats = self.candidates[anchor].seats;
        // The anchor's segment (see `Slot::part`): from its first
        // candidate still listed, in wait order.
        let list = &self.lists[l];
        let part = list.slots[list.pos[anchor]].part;
        let mut cursor = list.pos[anchor];
        while list.prev[cursor] != NONE && list.slots[list.prev[cursor]].part == part {
            cursor = list.prev[cursor];
        }
        while cursor != NONE && seats < size && !self.roles.exhausted {
            if self.lists[l].slots[cursor].part != part {
                break;
            }
            let x = self.lists[l].order[cursor];
            cursor = self.lists[l].next[cursor];
            if x == anchor {
                continue;
            }
            let joiner = self.candidates[x].seats;
            if seats + joiner > size {
                // Too large for this group, perhaps not for another choice
                // of its members (`second_look.rs`).
                self.look.pass_over(x);
                continue;
            }
            if !self.rules.fits(anchor, x, joiner) {
                self.look.pass_over(x);
                continue;
            }
            if !self.region_fits(x) {
                self.look.pass_over(x);
                continue;
            }
            if self.admits(caps, size, seats, joiner, x).is_ok() {
                self.region_join(x);
                self.rules.join(x);
                group.push(x);
                self.add_member(x, joiner);
                seats += joiner;
            }
        }
        let short = (seats != size).then(|| {
            self.region_reason(anchor, &group)
                .or_else(|| self.rules_or_roles_reason(anchor, caps, true))
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
