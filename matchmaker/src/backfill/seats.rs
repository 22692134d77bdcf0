//! The open seats of one backfill as one fill takes them: per team, and in
//! a role-queue mode per role (docs/rules.md, "Backfill by role").
//!
//! A party is taken whole or not at all. With `keepTogether` it needs one
//! team with as many open seats as it has members (the team with the
//! fewest such seats is used, so larger gaps stay for larger parties);
//! without, its members spread over the teams (each to the team with the
//! most seats left). With open roles, a team takes a newcomer only while
//! every newcomer it holds can still be seated in an open role it listed
//! (or an open `any` seat); the roles are decided when the fill ends.

use super::OpenBackfill;
use crate::roles::open::OpenRoles;
use crate::roles::seat::assign;
use crate::roles::{Composition, RoleSeats, RoleTable};
use arcstr::ArcStr;

/// One backfill's seats while a fill is built.
pub(super) struct FillSeats<'a> {
    seats: Vec<u32>,
    /// Pool search indices of each team's newcomers.
    members: Vec<Vec<usize>>,
    roles: Option<Roles<'a>>,
}

/// The role side of [`FillSeats`].
#[derive(Clone)]
struct Roles<'a> {
    table: &'a RoleTable,
    open: &'a [OpenRoles],
    seats: Vec<RoleSeats>,
    /// Each team's newcomers' role masks, aligned with `members`.
    masks: Vec<Vec<u64>>,
}

/// What a finished fill seats.
pub(super) struct Seated {
    /// Each team's newcomers (pool search indices).
    pub members: Vec<Vec<usize>>,
    /// Each newcomer's role, aligned with `members` (`None` without roles).
    pub roles: Vec<Vec<Option<ArcStr>>>,
    /// Open seats per team once the fill is in.
    pub seats_left: Vec<u32>,
    /// Open roles per team once the fill is in (empty without roles).
    pub open_roles_left: Vec<OpenRoles>,
}

impl<'a> FillSeats<'a> {
    /// The seats of `backfill`; by role when the mode has a composition
    /// (its cycle's role table) and the backfill lists its open roles.
    pub(super) fn new(
        backfill: &'a OpenBackfill,
        roles: Option<(&'a RoleTable, &Composition)>,
    ) -> Self {
        let teams = backfill.open_seats.len();
        let roles =
            roles
                .filter(|_| backfill.open_roles.len() == teams)
                .map(|(table, composition)| Roles {
                    table,
                    open: &backfill.open_roles,
                    seats: backfill
                        .open_roles
                        .iter()
                        .map(|o| composition.compile(o))
                        .collect(),
                    masks: vec![Vec::new(); teams],
                });
        Self {
            seats: backfill.open_seats.clone(),
            members: vec![Vec::new(); teams],
            roles,
        }
    }

    /// Whether no seat is left.
    pub(super) fn full(&self) -> bool {
        self.seats.iter().all(|s| *s == 0)
    }

    /// Whether team `t` still seats its newcomers with `more` added.
    fn seats_roles(&self, t: usize, more: &[u64]) -> bool {
        let Some(r) = &self.roles else {
            return true;
        };
        let mut masks = r.masks[t].clone();
        masks.extend_from_slice(more);
        assign(&masks, &r.seats[t]).is_some()
    }

    fn push(&mut self, t: usize, search: usize, mask: Option<u64>) {
        self.seats[t] -= 1;
        self.members[t].push(search);
        if let (Some(r), Some(m)) = (&mut self.roles, mask) {
            r.masks[t].push(m);
        }
    }

    /// Takes the party of pool searches `searches` (role masks `masks`,
    /// aligned; ignored without roles) onto one team. Returns whether it
    /// was taken.
    pub(super) fn take_party(&mut self, searches: &[usize], masks: &[u64]) -> bool {
        let size = searches.len() as u32;
        let mut teams: Vec<usize> = (0..self.seats.len())
            .filter(|&t| self.seats[t] >= size)
            .collect();
        teams.sort_by_key(|&t| (self.seats[t], t));
        let Some(team) = teams.into_iter().find(|&t| self.seats_roles(t, masks)) else {
            return false;
        };
        for (k, &i) in searches.iter().enumerate() {
            self.push(team, i, masks.get(k).copied());
        }
        true
    }

    /// Takes the party of `searches` member by member, each onto the team
    /// with the most seats left that still seats it. Returns whether every
    /// member was taken; if not, nothing is.
    pub(super) fn take_spread(&mut self, searches: &[usize], masks: &[u64]) -> bool {
        if self.seats.iter().sum::<u32>() < searches.len() as u32 {
            return false;
        }
        let (seats, members, roles) =
            (self.seats.clone(), self.members.clone(), self.roles.clone());
        for (k, &i) in searches.iter().enumerate() {
            let mask = masks.get(k).copied();
            let mut teams: Vec<usize> = (0..self.seats.len())
                .filter(|&t| self.seats[t] > 0)
                .collect();
            teams.sort_by_key(|&t| (std::cmp::Reverse(self.seats[t]), t));
            let own = mask.map(|m| vec![m]).unwrap_or_default();
            match teams.into_iter().find(|&t| self.seats_roles(t, &own)) {
                Some(t) => self.push(t, i, mask),
                None => {
                    (self.seats, self.members, self.roles) = (seats, members, roles);
                    return false;
                }
            }
        }
        true
    }

    /// The fill as it stands: each newcomer's role decided by the exact
    /// seating of its team.
    pub(super) fn finish(self) -> Seated {
        let Some(r) = self.roles else {
            return Seated {
                roles: self.members.iter().map(|m| vec![None; m.len()]).collect(),
                members: self.members,
                seats_left: self.seats,
                open_roles_left: Vec::new(),
            };
        };
        let mut open_left: Vec<OpenRoles> = r.open.to_vec();
        let mut roles = Vec::with_capacity(self.members.len());
        for (t, masks) in r.masks.iter().enumerate() {
            // Every team was checked to seat its newcomers as they joined.
            let given = assign(masks, &r.seats[t]).unwrap_or_default();
            let names: Vec<Option<ArcStr>> = given
                .iter()
                .map(|&role| {
                    let name = r.table.role_arc(role);
                    if let Some(n) = open_left[t].get_mut(name.as_str()) {
                        *n = n.saturating_sub(1);
                    }
                    Some(name)
                })
                .collect();
            roles.push(names);
        }
        Seated {
            members: self.members,
            roles,
            seats_left: self.seats,
            open_roles_left: open_left,
        }
    }
}
