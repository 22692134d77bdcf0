//! Group building (SPEC 5.2-5.5): which candidates form a match.
//!
//! Anchors are tried longest-waiting first. For MMR and Ping, a group grows
//! from its anchor by taking the nearest unmatched candidate by value (MMR
//! or milliseconds; ties go to the longer wait) that fits **every** member
//! already in the group, whose seats do not overflow the match and, with
//! keep-together, whose party sizes can still be seated without splitting.
//! A group that reaches the match size is a match; otherwise it is dropped
//! for this cycle and the next unmatched candidate anchors, so one
//! unmatchable candidate never blocks the others.
//!
//! Speed: candidates sit in a value-sorted doubly linked list from which
//! matched ones are unlinked in O(1); an anchor only walks outwards while
//! the distance is within its own range (nobody further can fit it). One
//! cycle is a sort plus, per anchor, a walk over its neighbourhood: close
//! to N log N on real pools (see `benches/cycle.rs`).
//!
//! FIFO has no closeness rule: candidates are taken in wait order, first
//! fit by seats.

use crate::candidate::{order_key, Candidate};
use crate::reasons::WaitingReason;
use crate::teams::can_pack;
use crate::tolerance::fits;

const NONE: usize = usize::MAX;

/// Groups found in one cycle and reasons for the candidates left over.
#[derive(Debug, Clone, Default)]
pub struct Grouping {
    /// Each group: candidate indices, anchor first. Seats sum to the match size.
    pub groups: Vec<Vec<usize>>,
    /// For every candidate in no group: why.
    pub reasons: Vec<(usize, WaitingReason)>,
}

/// Seat rules shared by both grouping strategies.
struct Seats<'a> {
    caps: &'a [u32],
    size: u32,
    keep_together: bool,
}

impl Seats<'_> {
    /// Whether a party of `joiner` seats may join a group whose party sizes
    /// are `sizes`.
    fn admits(&self, sizes: &mut Vec<u32>, seats: u32, joiner: u32) -> Result<(), Blocked> {
        if seats + joiner > self.size {
            return Err(Blocked::Overflow);
        }
        if self.keep_together && (joiner > 1 || sizes.iter().any(|s| *s > 1)) {
            sizes.push(joiner);
            let ok = can_pack(sizes, self.caps);
            sizes.pop();
            if !ok {
                return Err(Blocked::Seating);
            }
        }
        Ok(())
    }
}

enum Blocked {
    Overflow,
    Seating,
}

/// Groups candidates by closeness (MMR or Ping). `values[i]` and
/// `ranges[i]` are candidate `i`'s MMR (or ping) and current range;
/// candidates are indexed longest-waiting first.
pub fn group_by_closeness(
    candidates: &[Candidate],
    values: &[f64],
    ranges: &[f64],
    caps: &[u32],
    keep_together: bool,
) -> Grouping {
    let n = candidates.len();
    let seats_rule = Seats {
        caps,
        size: caps.iter().sum(),
        keep_together,
    };
    let mut keyed: Vec<(u64, usize)> = (0..n).map(|i| (order_key(values[i]), i)).collect();
    keyed.sort_unstable();
    let by_value: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    let mut pos = vec![0; n];
    for (p, &c) in by_value.iter().enumerate() {
        pos[c] = p;
    }
    let mut prev: Vec<usize> = (0..n).map(|p| if p == 0 { NONE } else { p - 1 }).collect();
    let mut next: Vec<usize> = (0..n)
        .map(|p| if p + 1 == n { NONE } else { p + 1 })
        .collect();
    let mut matched = vec![false; n];
    let mut alive_seats: u64 = candidates.iter().map(|c| u64::from(c.seats)).sum();
    let mut out = Grouping::default();
    let mut sizes: Vec<u32> = Vec::new();

    for anchor in 0..n {
        if matched[anchor] {
            continue;
        }
        if alive_seats < u64::from(seats_rule.size) {
            out.reasons
                .push((anchor, not_enough(alive_seats, seats_rule.size)));
            continue;
        }
        let (va, ra) = (values[anchor], ranges[anchor]);
        let mut group = vec![anchor];
        sizes.clear();
        sizes.push(candidates[anchor].seats);
        let mut seats = candidates[anchor].seats;
        let mut in_range_seats = seats;
        let mut seating_blocked = false;
        let mut left = prev[pos[anchor]];
        let mut right = next[pos[anchor]];
        let distance = |p: usize| (values[by_value[p]] - va).abs();
        let nearest = [left, right]
            .into_iter()
            .filter(|p| *p != NONE)
            .map(distance)
            .reduce(f64::min);

        while seats < seats_rule.size {
            // Nearest side first; on equal distance the longer wait.
            let take_left = match (left, right) {
                (NONE, NONE) => break,
                (NONE, _) => false,
                (_, NONE) => true,
                (l, r) => {
                    let (dl, dr) = (distance(l), distance(r));
                    dl < dr || (dl == dr && by_value[l] < by_value[r])
                }
            };
            let p = if take_left { left } else { right };
            if distance(p) > ra + 1e-9 {
                // Nobody further on this side can fit the anchor.
                if take_left {
                    left = NONE;
                } else {
                    right = NONE;
                }
                continue;
            }
            if take_left {
                left = prev[p];
            } else {
                right = next[p];
            }
            let x = by_value[p];
            if !fits(va, ra, values[x], ranges[x]) {
                continue;
            }
            let joiner = candidates[x].seats;
            in_range_seats += joiner;
            if !group[1..]
                .iter()
                .all(|&m| fits(values[m], ranges[m], values[x], ranges[x]))
            {
                continue;
            }
            match seats_rule.admits(&mut sizes, seats, joiner) {
                Ok(()) => {
                    group.push(x);
                    sizes.push(joiner);
                    seats += joiner;
                }
                Err(Blocked::Seating) => seating_blocked = true,
                Err(Blocked::Overflow) => {}
            }
        }

        if seats == seats_rule.size {
            for &m in &group {
                matched[m] = true;
                alive_seats -= u64::from(candidates[m].seats);
                let p = pos[m];
                if prev[p] != NONE {
                    next[prev[p]] = next[p];
                }
                if next[p] != NONE {
                    prev[next[p]] = prev[p];
                }
            }
            out.groups.push(group);
        } else if seating_blocked && in_range_seats >= seats_rule.size {
            out.reasons.push((anchor, WaitingReason::NoExactSeating));
        } else {
            out.reasons.push((
                anchor,
                WaitingReason::NoCandidatesInRange {
                    nearest_distance: nearest,
                    range: ra,
                },
            ));
        }
    }
    out.reasons.retain(|(c, _)| !matched[*c]);
    out
}

/// FIFO grouping (SPEC 5.5): in wait order, first fit by seats; a match
/// forms as soon as the seats are filled exactly.
pub fn group_fifo(candidates: &[Candidate], caps: &[u32], keep_together: bool) -> Grouping {
    let n = candidates.len();
    let seats_rule = Seats {
        caps,
        size: caps.iter().sum(),
        keep_together,
    };
    // Wait-ordered linked list of unmatched candidates.
    let mut next: Vec<usize> = (0..n)
        .map(|i| if i + 1 == n { NONE } else { i + 1 })
        .collect();
    let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { NONE } else { i - 1 }).collect();
    let mut head = if n == 0 { NONE } else { 0 };
    let mut matched = vec![false; n];
    let mut alive_seats: u64 = candidates.iter().map(|c| u64::from(c.seats)).sum();
    let mut out = Grouping::default();
    let mut sizes: Vec<u32> = Vec::new();

    for anchor in 0..n {
        if matched[anchor] {
            continue;
        }
        if alive_seats < u64::from(seats_rule.size) {
            out.reasons
                .push((anchor, not_enough(alive_seats, seats_rule.size)));
            continue;
        }
        let mut group = vec![anchor];
        sizes.clear();
        sizes.push(candidates[anchor].seats);
        let mut seats = candidates[anchor].seats;
        let mut cursor = head;
        while cursor != NONE && seats < seats_rule.size {
            let x = cursor;
            cursor = next[cursor];
            if x == anchor {
                continue;
            }
            let joiner = candidates[x].seats;
            if seats_rule.admits(&mut sizes, seats, joiner).is_ok() {
                group.push(x);
                sizes.push(joiner);
                seats += joiner;
            }
        }
        if seats == seats_rule.size {
            for &m in &group {
                matched[m] = true;
                alive_seats -= u64::from(candidates[m].seats);
                if prev[m] != NONE {
                    next[prev[m]] = next[m];
                } else {
                    head = next[m];
                }
                if next[m] != NONE {
                    prev[next[m]] = prev[m];
                }
            }
            out.groups.push(group);
        } else {
            out.reasons.push((anchor, WaitingReason::NoExactSeating));
        }
    }
    out.reasons.retain(|(c, _)| !matched[*c]);
    out
}

fn not_enough(alive_seats: u64, size: u32) -> WaitingReason {
    WaitingReason::NotEnoughPlayers {
        seats_waiting: u32::try_from(alive_seats).unwrap_or(u32::MAX),
        seats_needed: size,
    }
}
