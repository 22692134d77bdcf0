//! Role queues inside group building (docs/rules.md, "Role queues"): a
//! joiner is admitted only if the group with it can still be seated into
//! the role seats of the teams (parties whole with `keepTogether`); a
//! joiner refused for that is passed over and the walk goes on, so a
//! group whose nearest fill cannot be seated is completed by candidates
//! further out.
//!
//! Cost: whether a joiner fits depends only on the group and the joiner's
//! role lists, so a refusal is remembered (by the joiner's lists) until
//! the group next grows, and a candidate like one refused costs no new
//! search. A walk passes over at most [`LOOKAHEAD_PER_SEAT`] candidates
//! per seat of the match for their roles: a group still short after that
//! many stays short this cycle (docs/rules.md, "Role queues").

use super::Grouper;
use crate::reasons::WaitingReason;
use crate::roles::{seat::can_seat, RoleSeats, RoleTable};
use smallvec::SmallVec;

/// Candidates a walk may pass over for their roles, per seat of the match.
pub const LOOKAHEAD_PER_SEAT: u32 = 8;

/// The role table of one cycle and the group being grown.
#[derive(Debug, Default)]
pub(super) struct RoleState<'a> {
    table: Option<&'a RoleTable>,
    /// The seats in force for the current try (its anchor's wait).
    seats: RoleSeats,
    /// The group's candidates so far.
    members: Vec<usize>,
    /// Whether the current walk refused someone for want of a seating.
    pub(super) blocked: bool,
    /// Candidates the current walk refused for their roles.
    refused: u32,
    /// Role lists (see [`signature`]) refused since the group last grew.
    refused_lists: Vec<u64>,
    /// Whether the walk has passed over as many as it may.
    pub(super) exhausted: bool,
}

/// The role lists of a candidate as one number: its member count, then
/// its members' masks sorted, 16 bits each (up to 3 members); `None` when
/// they do not fit it.
fn signature(masks: &[u64]) -> Option<u64> {
    if masks.len() > 3 || masks.iter().any(|m| *m >= 1 << 16) {
        return None;
    }
    let mut sorted = [0u64; 3];
    sorted[..masks.len()].copy_from_slice(masks);
    sorted[..masks.len()].sort_unstable();
    Some(
        sorted
            .iter()
            .fold(masks.len() as u64, |acc, m| (acc << 16) | m),
    )
}

impl<'a> Grouper<'a> {
    /// Adds role queues (docs/rules.md, "Role queues"): every group must
    /// seat into the composition's role seats.
    pub fn with_roles(mut self, table: Option<&'a RoleTable>) -> Self {
        self.roles.table = table;
        self
    }

    /// Starts a group at `anchor`: its party sizes and its members.
    pub(super) fn start_group(&mut self, anchor: usize) {
        self.sizes.clear();
        self.sizes.push(self.candidates[anchor].seats);
        self.roles.members.clear();
        self.roles.members.push(anchor);
        self.roles.blocked = false;
        self.roles.refused = 0;
        self.roles.refused_lists.clear();
        self.roles.exhausted = false;
        if let Some(t) = self.roles.table {
            self.roles.seats.clone_from(t.seats_for(anchor));
        }
    }

    /// Adds the admitted `x` (of `joiner` seats) to the group.
    pub(super) fn add_member(&mut self, x: usize, joiner: u32) {
        self.sizes.push(joiner);
        self.roles.members.push(x);
        self.roles.refused_lists.clear();
    }

    /// Whether the group with `x` can still be seated into the role seats
    /// of teams of `caps` players; always with no composition. A refusal
    /// counts against the walk's look-ahead.
    pub(super) fn roles_admit(&mut self, caps: &[u32], x: usize) -> bool {
        let Some(t) = self.roles.table else {
            return true;
        };
        let sig = signature(t.masks(x));
        let ok = match sig {
            Some(s) if self.roles.refused_lists.contains(&s) => false,
            _ => self.roles_fit(t, caps, x),
        };
        if !ok {
            if let Some(s) = sig {
                if !self.roles.refused_lists.contains(&s) {
                    self.roles.refused_lists.push(s);
                }
            }
            self.roles.refused += 1;
            let size: u32 = caps.iter().sum();
            if self.roles.refused >= LOOKAHEAD_PER_SEAT.saturating_mul(size) {
                self.roles.exhausted = true;
            }
        }
        ok
    }

    /// The exact check of [`Grouper::roles_admit`].
    fn roles_fit(&self, t: &RoleTable, caps: &[u32], x: usize) -> bool {
        let members = self.roles.members.iter().chain(std::iter::once(&x));
        let units: SmallVec<[&[u64]; 16]> = if self.keep_together {
            members.map(|&c| t.masks(c)).collect()
        } else {
            members.flat_map(|&c| t.masks(c).chunks(1)).collect()
        };
        can_seat(&units, caps, &self.roles.seats)
    }

    /// `NO_ROLE_SEATING` for a short group in which a joiner was refused
    /// for want of a seating, with the seats the group left empty.
    pub(super) fn roles_reason(&self, caps: &[u32]) -> Option<WaitingReason> {
        let t = self.roles.table?;
        if !self.roles.blocked {
            return None;
        }
        let masks: Vec<u64> = self
            .roles
            .members
            .iter()
            .flat_map(|&c| t.masks(c).iter().copied())
            .collect();
        let teams = u32::try_from(caps.len()).unwrap_or(u32::MAX);
        Some(WaitingReason::NoRoleSeating {
            short: t.lacking(&masks, &self.roles.seats, teams),
        })
    }
}
