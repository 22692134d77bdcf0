//! Role queues inside group building (docs/rules.md, "Role queues"): a
//! joiner is admitted only if the group with it can still be seated into
//! the role seats of the teams (parties whole with `keepTogether`); a
//! joiner refused for that is passed over and the walk goes on, so a
//! group whose nearest fill cannot be seated is completed by candidates
//! further out.

use super::Grouper;
use crate::reasons::WaitingReason;
use crate::roles::{seat::can_seat, RoleSeats, RoleTable};

/// The role table of one cycle and the group being grown.
#[derive(Debug, Default)]
pub(super) struct RoleState<'a> {
    table: Option<&'a RoleTable<'a>>,
    /// The seats in force for the current try (its anchor's wait).
    seats: RoleSeats,
    /// The group's candidates so far.
    members: Vec<usize>,
    /// Whether the current walk refused someone for want of a seating.
    pub(super) blocked: bool,
}

impl<'a> Grouper<'a> {
    /// Adds role queues (docs/rules.md, "Role queues"): every group must
    /// seat into the composition's role seats.
    pub fn with_roles(mut self, table: Option<&'a RoleTable<'a>>) -> Self {
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
        if let Some(t) = self.roles.table {
            self.roles.seats = t.seats_for(anchor);
        }
    }

    /// Adds the admitted `x` (of `joiner` seats) to the group.
    pub(super) fn add_member(&mut self, x: usize, joiner: u32) {
        self.sizes.push(joiner);
        self.roles.members.push(x);
    }

    /// Whether the group with `x` can still be seated into the role seats
    /// of teams of `caps` players; always with no composition.
    pub(super) fn roles_admit(&self, caps: &[u32], x: usize) -> bool {
        let Some(t) = self.roles.table else {
            return true;
        };
        let members = self.roles.members.iter().chain(std::iter::once(&x));
        let units: Vec<&[u64]> = if self.keep_together {
            members.map(|&c| t.masks(c)).collect()
        } else {
            members
                .flat_map(|&c| t.masks(c).chunks(1))
                .collect::<Vec<_>>()
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
