//! The second look of a try (docs/game-modes.md#how-a-cycle-forms-matches,
//! docs/rules.md "Seating"): when the walks left a group short after
//! passing over a candidate that fit the anchor but not the group (its
//! size, its party's seating, its roles, or a member it does not fit on
//! closeness, a rule or a region), another choice among the candidates
//! they met may still form a match.
//!
//! A walk takes the nearest joiner that fits, so it can take the room a
//! larger party needed: a duo and a solo leave a 4v4 two seats short of
//! two trios, where the duo and the trios make eight. With role queues it
//! can fill one role's seats with the nearest players and then refuse
//! every party that brings one more of that role: five damage players
//! nearest an anchor keep out both parties that carry the tanks. And a
//! near joiner who blocks two others keeps them out of a group that
//! needed them, not him.
//!
//! The second look searches the group's members and the candidates passed
//! over that fit the anchor (of the first [`MOST_MET`] a try passes over,
//! the [`MOST_CHOICES`] nearest, and of candidates alike in every respect
//! only as many as a match holds, see `second_look/choices.rs`) for a
//! group of the match's size,
//! nearest first, each included before it is left out: every member fits
//! every other on closeness, rules and regions, the parties pack into the
//! teams and, with role queues, the group seats into the role seats.
//! Candidates alike in every respect are tried in one place of the group
//! once (see `Search::alike`). It runs only for a try that stayed short
//! after passing someone over, only when those candidates together hold
//! enough seats (and players for the role seats), and it makes at most
//! [`CHECKS_PER_TRY`] group checks a try and [`CHECKS_PER_CYCLE`] a cycle
//! (the test of each candidate against the anchor counts as one): a pool
//! where it finds nothing costs a bounded amount, spent on the
//! longest-waiting anchors.

use super::Grouper;
use crate::candidate::Candidate;
use crate::regions::RegionTable;
use crate::roles::seat::{can_seat, most_seated};
use crate::roles::{RoleSeats, RoleTable};
use crate::rules::{GroupRules, RuleTable};
use crate::teams::can_pack;
use crate::tolerance::fits;
use smallvec::SmallVec;

mod choices;

/// Candidates one second look chooses among at most (the nearest).
pub const MOST_CHOICES: usize = 48;
// A fit row (`Search::fit_row`) holds the anchor and every choice.
const _: () = assert!(MOST_CHOICES < 64);
/// Candidates passed over that one try notes (the nearest; those a walk
/// meets further out are not chosen among).
pub const MOST_MET: usize = 128;
/// Group checks one second look may make.
pub const CHECKS_PER_TRY: u32 = 1_024;
/// Group checks the second looks of one cycle may make together.
pub const CHECKS_PER_CYCLE: u32 = 4_096;

/// What the current try passed over, for its second look.
#[derive(Debug)]
pub(super) struct Look {
    /// Candidates passed over, in the order met (the first [`MOST_MET`];
    /// one passed over by two walks of the try is listed twice).
    passed: Vec<usize>,
    /// How many of `passed` came in by [`Look::pass_over_alike`].
    alike: u32,
    /// Group checks the second looks may still make this cycle.
    checks_left: u32,
}

impl Default for Look {
    fn default() -> Self {
        Self {
            passed: Vec::new(),
            alike: 0,
            checks_left: CHECKS_PER_CYCLE,
        }
    }
}

impl Look {
    /// Starts a try (every walk of one anchor).
    pub(super) fn begin_try(&mut self) {
        self.passed.clear();
        self.alike = 0;
    }

    /// Notes that a walk passed over `x` (in range, within the rules and
    /// regions of the group it met) for its size, its party's seating or
    /// its roles. The first [`MOST_MET`] of a try are kept: the walks meet
    /// the nearest first.
    #[inline]
    pub(super) fn pass_over(&mut self, x: usize) {
        if self.passed.len() < MOST_MET {
            self.passed.push(x);
        }
    }

    /// [`Look::pass_over`] for a candidate whose role lists the group
    /// refused before: no more of them are noted than a match of `size`
    /// seats holds players, so that ninety damage players ahead of the
    /// parties that carry the tanks leave room for the parties.
    #[inline]
    pub(super) fn pass_over_alike(&mut self, x: usize, size: u32) {
        if self.alike < size {
            self.alike += 1;
            self.pass_over(x);
        }
    }
}

/// Whether candidates `a` and `b` fit each other on closeness (values
/// and ranges, none for FIFO), every rule and a common region.
fn pair_fits(
    closeness: Option<(&[f64], &[f64])>,
    rules: Option<&RuleTable<'_>>,
    regions: Option<&RegionTable>,
    a: usize,
    b: usize,
) -> bool {
    if let Some((values, ranges)) = closeness {
        if !fits(values[a], ranges[a], values[b], ranges[b]) {
            return false;
        }
    }
    if let Some(t) = rules {
        let mut pair = GroupRules::default();
        pair.start(t, a);
        if pair.admits(t, b).is_err() {
            return false;
        }
    }
    regions.is_none_or(|t| t.compatible(t.mask(a), b))
}

/// Candidate `x`'s kind (see `Search::alike`).
fn kind_of(roles: Option<&RoleTable>, candidates: &[Candidate], x: usize) -> Option<u64> {
    match roles {
        Some(table) => table.signature(x),
        None => Some(u64::from(candidates[x].seats)),
    }
}

impl Grouper<'_> {
    /// A full group for `anchor` among `group`'s members and the
    /// candidates the try passed over (see the module's comment), anchor
    /// first; `None` when there is none within the budget, or nobody was
    /// passed over.
    pub(super) fn second_look(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
        group: &[usize],
    ) -> Option<Vec<usize>> {
        if self.look.passed.is_empty() || self.look.checks_left == 0 {
            return None;
        }
        let mut pool: Vec<usize> = group
            .iter()
            .chain(&self.look.passed)
            .copied()
            .filter(|&c| c != anchor && !self.matched[c])
            .collect();
        // Nearest first, ties to the longer wait, as the walks meet them.
        if self.fifo {
            pool.sort_unstable();
        } else {
            let va = self.values[anchor];
            pool.sort_by(|&a, &b| {
                (self.values[a] - va)
                    .abs()
                    .total_cmp(&(self.values[b] - va).abs())
                    .then(a.cmp(&b))
            });
        }
        pool.dedup();
        // Only those that fit the anchor itself can join any group of it.
        let budget = self.look.checks_left;
        self.look.checks_left =
            budget.saturating_sub(u32::try_from(pool.len()).unwrap_or(u32::MAX));
        let closeness = (!self.fifo).then_some((self.values, self.ranges));
        let (rules_table, regions_table) = (self.rules.table(), self.regions);
        pool.retain(|&c| pair_fits(closeness, rules_table, regions_table, anchor, c));
        // Of candidates alike in every respect, only as many as a match
        // holds: forty damage players met first leave room for the
        // parties met after them.
        self.keep_few_alike(anchor, &mut pool, size);
        let roles = self.role_table();
        pool.truncate(MOST_CHOICES);
        let held: u64 = std::iter::once(anchor)
            .chain(pool.iter().copied())
            .map(|c| u64::from(self.candidates[c].seats))
            .sum();
        if held < u64::from(size) {
            return None;
        }
        if let Some(t) = roles {
            let players: SmallVec<[u64; 64]> = std::iter::once(anchor)
                .chain(pool.iter().copied())
                .flat_map(|c| t.masks(c).iter().copied())
                .collect();
            let teams = u32::try_from(caps.len()).unwrap_or(u32::MAX);
            if (most_seated(&players, t.seats_for(anchor), teams) as u64) < u64::from(size) {
                return None;
            }
        }
        // Seats of `pool[i..]`, to stop where too few are left.
        let mut after = vec![0u32; pool.len() + 1];
        for i in (0..pool.len()).rev() {
            after[i] = after[i + 1].saturating_add(self.candidates[pool[i]].seats);
        }
        let rules_table = self.rules.table();
        let mut rules = GroupRules::default();
        if let Some(t) = rules_table {
            rules.start(t, anchor);
        }
        let regions: Vec<u64> = self
            .regions
            .map(|t| t.mask(anchor).to_vec())
            .unwrap_or_default();
        let budget = CHECKS_PER_TRY.min(self.look.checks_left);
        let mut search = Search {
            candidates: self.candidates,
            closeness: (!self.fifo).then_some((self.values, self.ranges)),
            rules: rules_table,
            regions: self.regions,
            roles: roles.map(|t| (t, t.seats_for(anchor))),
            caps,
            keep_together: self.keep_together,
            size,
            pool: &pool,
            after: &after,
            checks: budget,
            chosen: vec![anchor],
            rows: vec![None; pool.len()],
        };
        let found = search.grow(0, self.candidates[anchor].seats, &rules, &regions);
        self.look.checks_left -= budget - search.checks;
        found.then_some(search.chosen)
    }
}

/// One second look's search (see the module's comment).
struct Search<'s> {
    candidates: &'s [Candidate],
    /// Each candidate's value and range (MMR or Ping); `None` for FIFO.
    closeness: Option<(&'s [f64], &'s [f64])>,
    rules: Option<&'s RuleTable<'s>>,
    regions: Option<&'s RegionTable>,
    /// The role table and the anchor's role seats, with role queues.
    roles: Option<(&'s RoleTable, &'s RoleSeats)>,
    caps: &'s [u32],
    keep_together: bool,
    size: u32,
    /// The candidates to choose from, nearest first.
    pool: &'s [usize],
    /// Seats of `pool[i..]`.
    after: &'s [u32],
    /// Group checks left.
    checks: u32,
    /// The group so far, anchor first.
    chosen: Vec<usize>,
    /// Per pool position, its [`Search::fit_row`] once computed.
    rows: Vec<Option<u64>>,
}

impl Search<'_> {
    /// Completes `chosen` (of `seats` seats, rule state `rules`, shared
    /// regions `regions`) from `pool[from..]`; `false` when no completion
    /// was found within the checks left.
    fn grow(&mut self, from: usize, seats: u32, rules: &GroupRules, regions: &[u64]) -> bool {
        if seats == self.size {
            return true;
        }
        // Pool positions of the candidates tried in this place of the
        // group (see `Search::alike`).
        let mut tried: SmallVec<[usize; 8]> = SmallVec::new();
        for i in from..self.pool.len() {
            if seats.saturating_add(self.after[i]) < self.size || self.checks == 0 {
                return false;
            }
            let x = self.pool[i];
            let joiner = self.candidates[x].seats;
            if seats + joiner > self.size {
                continue;
            }
            self.checks -= 1;
            if tried.iter().any(|&j| self.alike(j, i)) {
                continue;
            }
            if !self.fits(x, rules, regions) {
                continue;
            }
            tried.push(i);
            self.chosen.push(x);
            if self.seatable() {
                let mut joined = rules.clone();
                if let Some(t) = self.rules {
                    joined.join(t, x);
                }
                let mut shared = regions.to_vec();
                if let Some(t) = self.regions {
                    t.narrow(&mut shared, x);
                }
                if self.grow(i + 1, seats + joiner, &joined, &shared) {
                    return true;
                }
            }
            self.chosen.pop();
        }
        false
    }

    /// Whether `pool[i]` and `pool[j]` are alike: of one kind (seats and,
    /// with role queues, role lists), with the same `equal` and
    /// `intersect` values and regions, and each fitting the same others
    /// of the pool and the anchor on closeness and every rule. A candidate
    /// alike one already tried in a place of the group is not tried there:
    /// it would complete a group exactly where the first, nearer, did, and
    /// that completed none. Without this, twenty damage players ahead of
    /// the parties that carry the tanks are chosen four at a time,
    /// thousands of ways, before a group with one of them is tried.
    fn alike(&mut self, i: usize, j: usize) -> bool {
        let (x, y) = (self.pool[i], self.pool[j]);
        let roles = self.roles.map(|(t, _)| t);
        let kind = kind_of(roles, self.candidates, x);
        if kind.is_none() || kind != kind_of(roles, self.candidates, y) {
            return false;
        }
        if self.rules.is_some_and(|t| !t.same_values(x, y))
            || self.regions.is_some_and(|t| t.mask(x) != t.mask(y))
        {
            return false;
        }
        let both = !((1u64 << (i + 1)) | (1u64 << (j + 1)));
        self.fit_row(i) & both == self.fit_row(j) & both
    }

    /// Bit `k` set when `pool[i]` fits the `k`-th of the anchor and the
    /// pool (closeness, every rule, a common region), computed once.
    fn fit_row(&mut self, i: usize) -> u64 {
        if let Some(row) = self.rows[i] {
            return row;
        }
        let x = self.pool[i];
        let mut row = 0u64;
        for (k, z) in std::iter::once(self.anchor())
            .chain(self.pool.iter().copied())
            .enumerate()
        {
            if self.pair_fits(z, x) {
                row |= 1 << k;
            }
        }
        self.rows[i] = Some(row);
        row
    }

    /// The anchor (the first chosen).
    fn anchor(&self) -> usize {
        self.chosen[0]
    }

    /// [`pair_fits`] over this search's closeness, rules and regions.
    fn pair_fits(&self, a: usize, b: usize) -> bool {
        pair_fits(self.closeness, self.rules, self.regions, a, b)
    }

    /// Whether `x` fits every member chosen on closeness, the rules and
    /// the regions.
    fn fits(&self, x: usize, rules: &GroupRules, regions: &[u64]) -> bool {
        if let Some((values, ranges)) = self.closeness {
            let (vx, rx) = (values[x], ranges[x]);
            if !self
                .chosen
                .iter()
                .all(|&m| fits(values[m], ranges[m], vx, rx))
            {
                return false;
            }
        }
        if let Some(t) = self.rules {
            if rules.admits(t, x).is_err() {
                return false;
            }
        }
        self.regions.is_none_or(|t| t.compatible(regions, x))
    }

    /// Whether the chosen candidates sit on the teams: in the role seats
    /// with role queues (parties whole with keep-together), else with
    /// keep-together their parties packed whole.
    fn seatable(&self) -> bool {
        if let Some((table, seats)) = self.roles {
            let members = self.chosen.iter().map(|&c| table.masks(c));
            let units: SmallVec<[&[u64]; 16]> = if self.keep_together {
                members.collect()
            } else {
                members.flat_map(|m| m.chunks(1)).collect()
            };
            return can_seat(&units, self.caps, seats);
        }
        if !self.keep_together {
            return true;
        }
        let sizes: SmallVec<[u32; 16]> = self
            .chosen
            .iter()
            .map(|&c| self.candidates[c].seats)
            .collect();
        can_pack(&sizes, self.caps)
    }
}
