//! Group building (docs/game-modes.md#how-a-cycle-forms-matches, docs/game-modes.md#fifo): which candidates form a match.
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
//!
//! The [`Grouper`] keeps that state across the passes of one cycle (full
//! shape, then relaxed shapes, settled flexible shapes and bots, docs/game-modes.md#thin-pools-smaller-matches-and-bots):
//! the list is built once, and each pass tries anchors against a target
//! shape. It also keeps, per candidate, the seats of the largest group any
//! try built around or with it (`found`, docs/architecture.md#where-each-rule-lives).

use crate::candidate::{order_key, Candidate};
use crate::reasons::WaitingReason;
use crate::regions::RegionTable;
use crate::teams::can_pack;
use smallvec::SmallVec;

mod close;
mod fifo;
mod heads;
mod indexed;
mod list;
mod ranks;
mod regional;
mod roles;
mod rules;
mod second_look;

use list::{List, Slot, NONE};

/// What one try built around an anchor.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// Candidate indices, anchor first, every one in range of every other
    /// and, with keep-together, seatable in the target's teams.
    pub group: Vec<usize>,
    /// Seats of the group (players).
    pub seats: u32,
    /// Why the group is short of the target, `None` when it is full.
    pub short: Option<WaitingReason>,
}

/// The state of one cycle's grouping: which candidates are still unmatched,
/// and the closeness list they sit in.
pub struct Grouper<'a> {
    candidates: &'a [Candidate],
    values: &'a [f64],
    ranges: &'a [f64],
    keep_together: bool,
    fifo: bool,
    /// `lists[0]`: every candidate in value order (closeness) or wait
    /// order (FIFO); with regions, `lists[1 + r]`: the candidates within
    /// their ceiling in region `r`, in value order.
    lists: Vec<List>,
    matched: Vec<bool>,
    alive_seats: u64,
    found: Vec<u32>,
    sizes: Vec<u32>,
    /// Whether a party of `s` seats (up to 3) packs with `sizes` into
    /// `packed_caps` (0 not known, 1 yes, 2 no): known until the group
    /// next grows.
    packs: [u8; 4],
    packed_caps: SmallVec<[u32; 4]>,
    /// The region rule (docs/regions.md), when the mode has `regions`.
    regions: Option<&'a RegionTable>,
    /// Regions shared by the group being grown (bit words).
    group_regions: Vec<u64>,
    /// In-range candidates refused for want of a common region in the
    /// current try (for `NO_COMMON_REGION`).
    region_blocked: Vec<usize>,
    /// The MMR or Ping rule and each candidate's wait (seconds), for the
    /// unblock hint of `NO_CANDIDATES_IN_RANGE`; `None`: no hint.
    hints: Option<(&'a crate::config::Algorithm, &'a [f64])>,
    /// The mode's rules over attributes (docs/rules.md), with what the
    /// current try and the whole cycle learnt of them.
    rules: rules::RuleState<'a>,
    /// Role queues (docs/rules.md, "Role queues"), when the mode has a
    /// `composition`.
    roles: roles::RoleState<'a>,
    /// The candidates the current try passed over, for its second look.
    look: second_look::Look,
}

impl<'a> Grouper<'a> {
    /// A grouper by closeness (MMR or Ping). `values[i]` and `ranges[i]`
    /// are candidate `i`'s MMR (or ping) and current range; candidates are
    /// indexed longest-waiting first.
    pub fn closeness(
        candidates: &'a [Candidate],
        values: &'a [f64],
        ranges: &'a [f64],
        keep_together: bool,
    ) -> Self {
        let n = candidates.len();
        let mut keyed: Vec<(u64, usize)> = (0..n).map(|i| (order_key(values[i]), i)).collect();
        keyed.sort_unstable();
        let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
        Self::with_order(candidates, values, ranges, keep_together, false, order)
    }

    /// A FIFO grouper: wait order, no closeness rule.
    pub fn fifo(candidates: &'a [Candidate], keep_together: bool) -> Self {
        let order: Vec<usize> = (0..candidates.len()).collect();
        Self::with_order(candidates, &[], &[], keep_together, true, order)
    }

    fn with_order(
        candidates: &'a [Candidate],
        values: &'a [f64],
        ranges: &'a [f64],
        keep_together: bool,
        fifo: bool,
        order: Vec<usize>,
    ) -> Self {
        let n = candidates.len();
        Self {
            candidates,
            values,
            ranges,
            keep_together,
            fifo,
            lists: vec![List::new(candidates, values, ranges, order)],
            matched: vec![false; n],
            alive_seats: candidates.iter().map(|c| u64::from(c.seats)).sum(),
            found: candidates.iter().map(|c| c.seats).collect(),
            sizes: Vec::new(),
            packs: [0; 4],
            packed_caps: SmallVec::new(),
            regions: None,
            group_regions: Vec::new(),
            region_blocked: Vec::new(),
            hints: None,
            rules: rules::RuleState::default(),
            roles: roles::RoleState::default(),
            look: second_look::Look::default(),
        }
    }

    /// Adds the unblock hint of `NO_CANDIDATES_IN_RANGE` (see
    /// [`crate::hints`]): `waits[c]` is candidate `c`'s wait (seconds).
    pub fn with_hints(mut self, algorithm: &'a crate::config::Algorithm, waits: &'a [f64]) -> Self {
        self.hints = Some((algorithm, waits));
        self
    }

    /// The candidates, longest-waiting first.
    pub fn candidates(&self) -> &'a [Candidate] {
        self.candidates
    }

    /// Candidates in this grouper.
    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    /// Whether there is no candidate.
    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }

    /// Whether candidate `c` is in a group already taken.
    pub fn is_matched(&self, c: usize) -> bool {
        self.matched[c]
    }

    /// Seats of every unmatched candidate (players).
    pub fn alive_seats(&self) -> u64 {
        self.alive_seats
    }

    /// Per candidate, seats of the largest group a try built around or
    /// with it (at least its own seats).
    pub fn found(&self) -> &[u32] {
        &self.found
    }

    /// The reason of an anchor skipped because fewer than `size` seats wait.
    pub fn not_enough(&self, size: u32) -> WaitingReason {
        WaitingReason::NotEnoughPlayers {
            seats_waiting: u32::try_from(self.alive_seats).unwrap_or(u32::MAX),
            seats_needed: size,
        }
    }

    /// Grows a group from `anchor` towards `caps` (players per team; the
    /// group's seats never exceed their sum). The anchor must be unmatched.
    pub fn try_anchor(&mut self, anchor: usize, caps: &[u32]) -> Attempt {
        let size: u32 = caps.iter().sum();
        self.rules.begin_try();
        self.look.begin_try();
        let indexed = if self.rules.index_first(anchor) {
            self.grow_indexed(anchor, caps, size)
        } else {
            None
        };
        let attempt = if let Some(full) = indexed {
            full
        } else if let Some(l) = self.rules.partition_list() {
            self.grow_partitioned(anchor, caps, size, l)
        } else if self.fifo {
            self.grow_fifo(anchor, caps, size, 0)
        } else if let Some(t) = self.regions {
            self.grow_regional(t, anchor, caps, size)
        } else {
            self.grow_close(anchor, caps, size, 0)
        };
        // A group the walks left short after passing over a joiner may be
        // formed without some of the nearest (`second_look.rs`).
        let attempt = match attempt.short {
            Some(_) => match self.second_look(anchor, caps, size, &attempt.group) {
                Some(group) => Attempt {
                    group,
                    seats: size,
                    short: None,
                },
                None => attempt,
            },
            None => attempt,
        };
        for &m in &attempt.group {
            self.found[m] = self.found[m].max(attempt.seats);
        }
        self.rules.end_try(attempt.short.is_some());
        self.rules.note_try(anchor, attempt.short.is_some());
        attempt
    }

    /// Marks `group` matched and unlinks it.
    pub fn take(&mut self, group: &[usize]) {
        for &m in group {
            if self.matched[m] {
                continue;
            }
            self.matched[m] = true;
            self.alive_seats -= u64::from(self.candidates[m].seats);
            self.lists[0].unlink(m);
            // A region's list holds only the candidates within their
            // ceiling there (see `with_regions`).
            if let Some(t) = self.regions {
                for (r, list) in self.lists.iter_mut().enumerate().skip(1) {
                    if t.reaches(m, r - 1) {
                        list.unlink(m);
                    }
                }
            }
            // And a partition's list its candidates (see `with_rules`).
            if let Some(l) = self.rules.partition_list() {
                self.lists[l].unlink(m);
            }
            if let Some(l) = self.index_list() {
                self.lists[l].unlink(m);
            }
        }
    }

    /// Whether candidate `x`, a party of `joiner` seats, may join a group
    /// of `seats` whose party sizes are `self.sizes`.
    fn admits(
        &mut self,
        caps: &[u32],
        size: u32,
        seats: u32,
        joiner: u32,
        x: usize,
    ) -> Result<(), Blocked> {
        self.admits_slot(caps, size, seats, joiner, x, 0)
    }

    /// [`Grouper::admits`] with `x`'s role lists as its list slot holds
    /// them (`Slot::roles`; 0 when not known).
    fn admits_slot(
        &mut self,
        caps: &[u32],
        size: u32,
        seats: u32,
        joiner: u32,
        x: usize,
        roles: u64,
    ) -> Result<(), Blocked> {
        if seats + joiner > size {
            self.look.pass_over(x);
            return Err(Blocked::Overflow);
        }
        // A role seating seats the parties whole within `caps`: when there
        // is one, the packing below holds and is not searched again. A
        // refusal still packs first, so that a group the parties alone
        // cannot seat says so (but a role list refused before came with
        // the same party sizes into the same group: they packed then).
        let refused = match self.roles_check(caps, x, roles) {
            roles::RoleCheck::Fits => return Ok(()),
            roles::RoleCheck::NoRoles => None,
            roles::RoleCheck::Refused(sig) => Some(sig),
            roles::RoleCheck::RefusedBefore => {
                self.look.pass_over_alike(x, size);
                self.roles_refuse(caps, None, true);
                return Err(Blocked::Roles);
            }
        };
        if self.keep_together && (joiner > 1 || self.sizes.iter().any(|s| *s > 1)) {
            if self.packed_caps.as_slice() != caps {
                self.packs = [0; 4];
                self.packed_caps = SmallVec::from_slice(caps);
            }
            let known = self.packs.get(joiner as usize).copied().unwrap_or(0);
            let ok = if known == 0 {
                self.sizes.push(joiner);
                let ok = can_pack(&self.sizes, caps);
                self.sizes.pop();
                if let Some(k) = self.packs.get_mut(joiner as usize) {
                    *k = if ok { 1 } else { 2 };
                }
                ok
            } else {
                known == 1
            };
            if !ok {
                self.look.pass_over(x);
                return Err(Blocked::Seating);
            }
        }
        match refused {
            Some(sig) => {
                self.look.pass_over(x);
                self.roles_refuse(caps, sig, false);
                Err(Blocked::Roles)
            }
            None => Ok(()),
        }
    }
}

enum Blocked {
    Overflow,
    Seating,
    /// No role seating of the group with the joiner (docs/rules.md, "Role queues").
    Roles,
}
