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
//! search; a joiner that breaks Hall's condition over the group's players
//! pooled (counters kept as the group grows) is refused without the team
//! search. A walk passes over at most [`LOOKAHEAD_PER_SEAT`] candidates
//! per seat of the match for their roles: a group still short after that
//! many stays short this cycle (docs/rules.md, "Role queues"). Within a
//! long run of players with the same role lists one after another, each
//! refused for them, the players past the match's seats count an eighth
//! each, so that a crowd of one role between the players a group needs
//! does not end its walk.

use super::Grouper;
use crate::reasons::WaitingReason;
use crate::roles::seat::{can_seat, count_within, room_of};
use crate::roles::table::signature_masks;
use crate::roles::{RoleSeats, RoleTable};
use smallvec::SmallVec;

/// Candidates a walk may pass over for their roles, per seat of the match.
pub const LOOKAHEAD_PER_SEAT: u32 = 8;
/// Candidates a FIFO walk (or any walk within a run of one role list)
/// passes over for role lists refused before that count as one passed
/// over after a seating search (see [`Grouper::roles_refuse`]).
pub const FIFO_KNOWN_PER_SEARCHED: u32 = 8;

/// How many eighths of refusals a walk for teams of `caps` players may
/// count ([`LOOKAHEAD_PER_SEAT`] per seat of the match).
fn look_ahead(caps: &[u32]) -> u32 {
    let size: u32 = caps.iter().sum();
    LOOKAHEAD_PER_SEAT
        .saturating_mul(size)
        .saturating_mul(FIFO_KNOWN_PER_SEARCHED)
}

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
    /// Candidates the current walk refused for their roles, in eighths
    /// (see [`Grouper::roles_refuse`]).
    refused: u32,
    /// Role lists (see [`RoleTable::signature`]) refused since the group
    /// last grew.
    refused_lists: Vec<u64>,
    /// Whether the walk has passed over as many as it may.
    pub(super) exhausted: bool,
    /// Whether the last refusal counted was of role lists refused before
    /// (see [`Grouper::roles_refused_in_run`]).
    last_known: bool,
    /// Hall's condition over the group's players pooled (up to 8 roles):
    /// per role set, the seats of one team ([`room_of`]) and the group's
    /// players listing only roles of it. Empty past 8 roles.
    room: SmallVec<[u32; 16]>,
    within: SmallVec<[u32; 16]>,
}

/// What the role check says of a joiner (see [`Grouper::roles_check`]).
pub(super) enum RoleCheck {
    /// The mode has no composition.
    NoRoles,
    /// The group with the joiner has a role seating.
    Fits,
    /// No role seating; the joiner's role lists as one number, if any.
    Refused(Option<u64>),
    /// Role lists refused since the group last grew: no role seating, and
    /// the party sizes packed then (the same sizes into the same group).
    RefusedBefore,
}

impl<'a> Grouper<'a> {
    /// Adds role queues (docs/rules.md, "Role queues"): every group must
    /// seat into the composition's role seats.
    pub fn with_roles(mut self, table: Option<&'a RoleTable>) -> Self {
        self.roles.table = table;
        // Each slot keeps its candidate's role lists: a walk reads them in
        // list order instead of from the table, one candidate here and one
        // there.
        if let Some(t) = table {
            for list in &mut self.lists {
                for (slot, &c) in list.slots.iter_mut().zip(&list.order) {
                    slot.roles = t.signature_raw(c);
                }
            }
        }
        self
    }

    /// The role table, when the mode has role queues.
    pub(super) fn role_table(&self) -> Option<&'a RoleTable> {
        self.roles.table
    }

    /// Starts a group at `anchor`: its party sizes and its members.
    pub(super) fn start_group(&mut self, anchor: usize) {
        self.sizes.clear();
        self.sizes.push(self.candidates[anchor].seats);
        self.packs = [0; 4];
        self.roles.members.clear();
        self.roles.members.push(anchor);
        self.roles.blocked = false;
        self.roles.refused = 0;
        self.roles.refused_lists.clear();
        self.roles.exhausted = false;
        self.roles.last_known = false;
        if let Some(t) = self.roles.table {
            let seats = t.seats_for(anchor);
            if *seats != self.roles.seats || self.roles.room.is_empty() {
                self.roles.seats.clone_from(seats);
                self.roles.room = room_of(seats);
            }
            self.roles.within.clear();
            self.roles.within.resize(self.roles.room.len(), 0);
            for &m in t.masks(anchor) {
                count_within(&mut self.roles.within, m, true);
            }
        }
    }

    /// Adds the admitted `x` (of `joiner` seats) to the group.
    pub(super) fn add_member(&mut self, x: usize, joiner: u32) {
        self.sizes.push(joiner);
        self.packs = [0; 4];
        self.roles.members.push(x);
        self.roles.refused_lists.clear();
        if let Some(t) = self.roles.table {
            for &m in t.masks(x) {
                count_within(&mut self.roles.within, m, true);
            }
        }
    }

    /// Whether the group with `x` can still be seated into the role seats
    /// of teams of `caps` players. Nothing is
    /// counted: a refusal counts by [`Grouper::roles_refuse`]. A seating
    /// keeps every party whole within `caps` with `keepTogether`, so
    /// [`RoleCheck::Fits`] there means the parties pack too.
    ///
    /// `raw` is `x`'s role lists as its list slot holds them (0: not
    /// known there, read from the table).
    pub(super) fn roles_check(&self, caps: &[u32], x: usize, raw: u64) -> RoleCheck {
        let Some(t) = self.roles.table else {
            return RoleCheck::NoRoles;
        };
        let sig = if raw == 0 {
            t.signature(x)
        } else {
            RoleTable::signature_of_raw(raw)
        };
        let ok = match sig {
            Some(s) if self.roles.refused_lists.contains(&s) => return RoleCheck::RefusedBefore,
            Some(s) => self.roles_fit(t, caps, &signature_masks(s)),
            None => self.roles_fit(t, caps, t.masks(x)),
        };
        if ok {
            RoleCheck::Fits
        } else {
            RoleCheck::Refused(sig)
        }
    }

    /// Counts a joiner refused by [`Grouper::roles_check`] (its role lists
    /// `sig`) against the walk's look-ahead. In a FIFO walk, one refused
    /// for role lists refused before (`known`, a comparison, no seating
    /// search) counts an eighth ([`FIFO_KNOWN_PER_SEARCHED`]): a FIFO walk
    /// starts at the front of the queue every time, so ninety damage
    /// players waiting ahead of the tanks would end every walk before it
    /// reached one. A closeness walk starts at its anchor, and counts each
    /// whole, except within a long run
    /// ([`Grouper::roles_refused_in_run`]).
    pub(super) fn roles_refuse(&mut self, caps: &[u32], sig: Option<u64>, known: bool) {
        if let Some(s) = sig {
            if !self.roles.refused_lists.contains(&s) {
                self.roles.refused_lists.push(s);
            }
        }
        self.roles.blocked = true;
        self.roles.last_known = known;
        self.roles.refused += if known && self.fifo {
            1
        } else {
            FIFO_KNOWN_PER_SEARCHED
        };
        if self.roles.refused >= look_ahead(caps) {
            self.roles.exhausted = true;
        }
    }

    /// Counts the last refusal, of role lists refused before, an eighth
    /// after all: the closeness walk calls this when that refusal came in
    /// a run of candidates one after another on its side, each refused for
    /// the same role lists, longer than the match has seats. Eighty-five
    /// damage players at one rating between the tanks and the supports
    /// would otherwise end the tanks' walk, while a walk through mixed
    /// role lists that cannot complete still ends after about eighty
    /// (short runs are common there, and counting them lightly would only
    /// lengthen walks that cannot complete).
    pub(super) fn roles_refused_in_run(&mut self, caps: &[u32]) {
        if !self.roles.last_known || self.fifo {
            return;
        }
        self.roles.last_known = false;
        self.roles.refused = self
            .roles
            .refused
            .saturating_sub(FIFO_KNOWN_PER_SEARCHED - 1);
        self.roles.exhausted = self.roles.refused >= look_ahead(caps);
    }

    /// The exact check of [`Grouper::roles_check`], for a joiner whose
    /// members' masks are `joiner`: Hall's condition over the players
    /// pooled on all teams first (necessary, from the group's counters),
    /// then the seating search.
    fn roles_fit(&self, t: &RoleTable, caps: &[u32], joiner: &[u64]) -> bool {
        let teams = u32::try_from(caps.len()).unwrap_or(u32::MAX);
        let pooled = self
            .roles
            .within
            .iter()
            .zip(&self.roles.room)
            .enumerate()
            .all(|(s, (within, room))| {
                let added = joiner.iter().filter(|m| *m & !(s as u64) == 0).count() as u32;
                within + added <= room.saturating_mul(teams)
            });
        if !pooled {
            return false;
        }
        let members = self
            .roles
            .members
            .iter()
            .map(|&c| t.masks(c))
            .chain(std::iter::once(joiner));
        let units: SmallVec<[&[u64]; 16]> = if self.keep_together {
            members.collect()
        } else {
            members.flat_map(|m| m.chunks(1)).collect()
        };
        can_seat(&units, caps, &self.roles.seats)
    }

    /// `NO_ROLE_SEATING` for a short group in which a joiner was refused
    /// for want of a seating, with the seats the group left empty.
    pub(super) fn roles_reason(&self, caps: &[u32]) -> Option<WaitingReason> {
        if !self.roles.blocked {
            return None;
        }
        self.empty_seats_reason(caps)
    }

    /// `NO_ROLE_SEATING` with the role seats the group leaves empty
    /// (`short`), whether or not a joiner was refused for want of a
    /// seating; `None` without role queues.
    fn empty_seats_reason(&self, caps: &[u32]) -> Option<WaitingReason> {
        let t = self.roles.table?;
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

    /// The reason, between the rules and the roles, of a short walk with
    /// `enough` seats in range (docs/rules.md, "Why a player is still
    /// waiting"): `RULE_NOT_MET`, else `NO_ROLE_SEATING`. In a role queue a
    /// rule is named only if a candidate it turned away in this walk lists
    /// a role of a seat the group left empty (any candidate, for an `any`
    /// seat): one it turned away that could take none of them is not what
    /// kept the group short, and the group's empty role seats are (also
    /// when no joiner was refused for want of a seating: three players of
    /// one build, a tank and two damage, beside a damage player of another
    /// build wait for a tank).
    pub(super) fn rules_or_roles_reason(
        &self,
        anchor: usize,
        caps: &[u32],
        enough: bool,
    ) -> Option<WaitingReason> {
        if !enough {
            return None;
        }
        let roles = match self.roles_reason(caps) {
            None if !self.rules.walk_refusals().is_empty() => self.empty_seats_reason(caps),
            roles => roles,
        };
        let (Some(t), Some(WaitingReason::NoRoleSeating { short })) = (self.roles.table, &roles)
        else {
            return self.rules.reason(anchor, true).or(roles);
        };
        if short.is_empty() {
            return self.rules.reason(anchor, true).or(roles);
        }
        let any = short.contains_key(crate::roles::ANY);
        let wanted = t.mask_of_names(short);
        let mut helped: SmallVec<[usize; 4]> = SmallVec::new();
        for &(k, x) in self.rules.walk_refusals() {
            if !helped.contains(&k) && (any || t.masks(x).iter().any(|m| m & wanted != 0)) {
                helped.push(k);
            }
        }
        self.rules
            .reason_among(anchor, true, |k| helped.contains(&k))
            .or(roles)
    }
}
