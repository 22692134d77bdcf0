//! The closeness walk of MMR and Ping (docs/game-modes.md#how-a-cycle-forms-matches):
//! a group grows from its anchor by taking the nearest unmatched candidate
//! by value that fits every member already in it, the rules, the regions,
//! the seats and the roles; a short group says why (the rules, regions,
//! roles or seating that held it back, else nobody in range).

use super::list::{Slot, NONE};
use super::{Attempt, Blocked, Grouper};
use crate::reasons::WaitingReason;
use crate::tolerance::fits;

impl Grouper<'_> {
    /// Grows a group from `anchor` over `lists[l]`; the region check
    /// applies on the list of every candidate (`l == 0`) only.
    pub(super) fn grow_close(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
        l: usize,
    ) -> Attempt {
        self.grow_close_within(anchor, caps, size, l, usize::MAX)
    }

    /// [`Grouper::grow_close`] looking at `steps` candidates at most.
    pub(super) fn grow_close_within(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
        l: usize,
        mut steps: usize,
    ) -> Attempt {
        let check_regions = l == 0;
        // Moved out while the walk borrows it; put back before returning.
        let list = std::mem::take(&mut self.lists[l]);
        let (order, slots) = (&list.order, &list.slots);
        let (va, ra) = (self.values[anchor], self.ranges[anchor]);
        let mut group = vec![anchor];
        // The joiners' values and ranges, for the every-member fit check.
        let mut joined: Vec<(f64, f64)> = Vec::with_capacity(size as usize);
        self.start_group(anchor);
        self.start_regions(anchor);
        self.rules.start(anchor);
        let mut seats = self.candidates[anchor].seats;
        let mut in_range_seats = seats;
        let mut seating_blocked = false;
        let anchor_pos = list.pos[anchor];
        let part = slots[anchor_pos].part;
        let same = |p: usize| {
            if p != NONE && slots[p].part == part {
                p
            } else {
                NONE
            }
        };
        let mut left = same(list.prev[anchor_pos]);
        let mut right = same(list.next[anchor_pos]);
        // Per side (right, left): the run of candidates refused for their
        // role lists that the side's walk is in (see
        // `Grouper::roles_refused_in_run`).
        let mut runs = [Run::NONE; 2];
        let distance = |p: usize| (slots[p].value - va).abs();
        // The nearest candidate the walk found out of mutual range, and
        // its distance: what a short group's `NO_CANDIDATES_IN_RANGE`
        // waits for (docs/error-codes.md).
        let mut nearest: Option<(f64, usize)> = None;
        let mut out_of_range = |p: usize| {
            let d = distance(p);
            if nearest.is_none_or(|(n, _)| d < n) {
                nearest = Some((d, order[p]));
            }
        };

        while seats < size && steps > 0 && !self.roles.exhausted {
            steps -= 1;
            // Nearest side first; on equal distance the longer wait.
            let take_left = match (left, right) {
                (NONE, NONE) => break,
                (NONE, _) => false,
                (_, NONE) => true,
                (l, r) => {
                    let (dl, dr) = (distance(l), distance(r));
                    dl < dr || (dl == dr && order[l] < order[r])
                }
            };
            let p = if take_left { left } else { right };
            if distance(p) > ra + 1e-9 {
                // Nobody further on this side can fit the anchor.
                out_of_range(p);
                if take_left {
                    left = NONE;
                } else {
                    right = NONE;
                }
                continue;
            }
            if take_left {
                left = same(list.prev[p]);
            } else {
                right = same(list.next[p]);
            }
            let Slot {
                value: vx,
                range: rx,
                seats: joiner,
                roles: role_lists,
                ..
            } = slots[p];
            if !fits(va, ra, vx, rx) {
                out_of_range(p);
                continue;
            }
            in_range_seats += joiner;
            let x = order[p];
            // Refused for the group, not the anchor alone: another choice
            // of members might take it (`second_look.rs`).
            if !joined.iter().all(|&(vm, rm)| fits(vm, rm, vx, rx)) {
                self.look.pass_over(x);
                continue;
            }
            if !self.rules.fits(anchor, x, joiner) {
                self.look.pass_over(x);
                continue;
            }
            if check_regions && !self.region_fits(x) {
                self.look.pass_over(x);
                continue;
            }
            match self.admits_slot(caps, size, seats, joiner, x, role_lists) {
                Ok(()) => {
                    if check_regions {
                        self.region_join(x);
                    }
                    self.rules.join(x);
                    group.push(x);
                    joined.push((vx, rx));
                    self.add_member(x, joiner);
                    seats += joiner;
                }
                Err(Blocked::Seating) => seating_blocked = true,
                Err(Blocked::Roles) => {
                    // The walk reached `p` from the position beside it on
                    // the anchor's side (nothing is unlinked during a try).
                    let side = usize::from(take_left);
                    let before = if take_left {
                        list.next[p]
                    } else {
                        list.prev[p]
                    };
                    let run = &mut runs[side];
                    let continues =
                        role_lists != 0 && run.lists == role_lists && run.last == before;
                    *run = Run {
                        last: p,
                        lists: role_lists,
                        count: if continues { run.count + 1 } else { 1 },
                    };
                    if run.count > size {
                        self.roles_refused_in_run(caps);
                    }
                }
                Err(Blocked::Overflow) => {}
            }
        }
        let region_short = if seats == size || in_range_seats < size || !check_regions {
            None
        } else {
            self.region_reason(anchor, &group)
        };
        let short = if seats == size {
            None
        } else if region_short.is_some() {
            region_short
        } else if let Some(reason) =
            self.rules_or_roles_reason(anchor, caps, in_range_seats >= size)
        {
            Some(reason)
        } else if seating_blocked && in_range_seats >= size {
            Some(WaitingReason::NoExactSeating {
                completing_party_sizes: crate::hints::completing_party_sizes(&self.sizes, caps),
            })
        } else {
            let unblocks_in_seconds = match (nearest, self.hints) {
                (Some((d, x)), Some((algorithm, waits))) => {
                    crate::hints::seconds_until_mutual_fit(algorithm, waits[anchor], waits[x], d)
                }
                _ => None,
            };
            Some(WaitingReason::NoCandidatesInRange {
                nearest_distance: nearest.map(|(d, _)| d),
                range: ra,
                unblocks_in_seconds,
            })
        };
        self.lists[l] = list;
        Attempt {
            group,
            seats,
            short,
        }
    }
}

/// Candidates refused one after another on one side of a walk for the
/// same role lists (see `Grouper::roles_refused_in_run` in `roles.rs`).
#[derive(Clone, Copy)]
struct Run {
    /// Position of the last of them.
    last: usize,
    /// Their role lists ([`Slot::roles`]).
    lists: u64,
    /// How many.
    count: u32,
}

impl Run {
    const NONE: Run = Run {
        last: NONE,
        lists: 0,
        count: 0,
    };
}
