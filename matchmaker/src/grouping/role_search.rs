//! The second look of role queues (docs/rules.md, "Seating"): when a
//! try's walks left its group short because joiners could not be seated,
//! another choice among the candidates those walks met may still seat.
//!
//! A walk takes the nearest joiner that keeps a seating possible, so it
//! can fill the seats of one role with the nearest players and then refuse
//! every party that brings one more of that role: five damage players
//! nearest an anchor keep out both parties that carry the tanks. Seats
//! alone can do the same: a trio that no longer fits where the nearest
//! solos took its room.
//!
//! The second look searches the candidates the walks found in range and
//! within the rules and regions (the [`MOST_CHOICES`] nearest, each
//! included before it is passed over) for a group of the match's size
//! that every member fits on closeness, rules and regions, and that seats
//! into the role seats. It runs only for a try that stayed short after
//! passing over a joiner for its roles or its size, only when those
//! candidates together could take as many seats as the match has, and it
//! makes at most [`CHECKS_PER_TRY`] group checks a try and
//! [`CHECKS_PER_CYCLE`] a cycle (the first test of a try counts
//! [`PRECHECK_COST`]): a pool where it finds nothing costs a bounded
//! amount, spent on the longest-waiting anchors.

use super::Grouper;
use crate::candidate::Candidate;
use crate::regions::RegionTable;
use crate::roles::seat::{can_seat, most_seated};
use crate::roles::{RoleSeats, RoleTable};
use crate::rules::{GroupRules, RuleTable};
use crate::tolerance::fits;
use smallvec::SmallVec;

/// Candidates one second look chooses among at most (the nearest the
/// walks met).
pub const MOST_CHOICES: usize = 64;
/// Group checks one second look may make.
pub const CHECKS_PER_TRY: u32 = 1_024;
/// Group checks the second looks of one cycle may make together.
pub const CHECKS_PER_CYCLE: u32 = 16_384;
/// Group checks the test whether a try's candidates could take every seat
/// counts for.
pub const PRECHECK_COST: u32 = 4;

impl Grouper<'_> {
    /// A full group for `anchor` among the candidates its walks met
    /// (see the module's comment), anchor first; `None` when there is none
    /// within the budget, or the try was not held back by roles.
    pub(super) fn search_roles(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
    ) -> Option<Vec<usize>> {
        let roles = self.roles.table?;
        if !self.roles.passed_over || self.roles.checks_left == 0 {
            return None;
        }
        let pool: Vec<usize> = self
            .roles
            .eligible
            .iter()
            .copied()
            .filter(|&c| c != anchor && !self.matched[c])
            .take(MOST_CHOICES)
            .collect();
        let seats = roles.seats_for(anchor);
        let players: SmallVec<[u64; 64]> = std::iter::once(anchor)
            .chain(pool.iter().copied())
            .flat_map(|c| roles.masks(c).iter().copied())
            .collect();
        let teams = u32::try_from(caps.len()).unwrap_or(u32::MAX);
        self.roles.checks_left = self.roles.checks_left.saturating_sub(PRECHECK_COST);
        if (most_seated(&players, seats, teams) as u64) < u64::from(size) {
            return None;
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
        let budget = CHECKS_PER_TRY.min(self.roles.checks_left);
        let mut search = Search {
            candidates: self.candidates,
            closeness: (!self.fifo).then_some((self.values, self.ranges)),
            rules: rules_table,
            regions: self.regions,
            roles,
            seats,
            caps,
            keep_together: self.keep_together,
            size,
            pool: &pool,
            after: &after,
            checks: budget,
            chosen: vec![anchor],
        };
        let seated = self.candidates[anchor].seats;
        let found = search.grow(0, seated, &rules, &regions);
        self.roles.checks_left -= budget - search.checks;
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
    roles: &'s RoleTable,
    seats: &'s RoleSeats,
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
}

impl Search<'_> {
    /// Completes `chosen` (of `seats` seats, rule state `rules`, shared
    /// regions `regions`) from `pool[from..]`; `false` when no completion
    /// was found within the checks left.
    fn grow(&mut self, from: usize, seats: u32, rules: &GroupRules, regions: &[u64]) -> bool {
        if seats == self.size {
            return true;
        }
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
            if !self.fits(x, rules, regions) {
                continue;
            }
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

    /// Whether the chosen candidates seat into the role seats of the
    /// teams (parties whole with keep-together).
    fn seatable(&self) -> bool {
        let members = self.chosen.iter().map(|&c| self.roles.masks(c));
        let units: SmallVec<[&[u64]; 16]> = if self.keep_together {
            members.collect()
        } else {
            members.flat_map(|m| m.chunks(1)).collect()
        };
        can_seat(&units, self.caps, self.seats)
    }
}
