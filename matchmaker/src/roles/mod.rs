//! Role queues (docs/rules.md, "Role queues"): a mode's `composition`
//! says how many seats of each role every team has, and a group is a match
//! only if its players can be seated into those role seats.
//!
//! - [`Composition`]: the config block and its validation ([`check`]).
//! - [`RoleSeats`]: one step's seats per team, compiled against the
//!   composition's role list ([`Composition::seats_at`]).
//! - [`seat`]: the exact seating search (feasibility while a group grows,
//!   the final seating by `teamAssignment`).
//! - [`table`]: each candidate's role lists as bit masks, for one cycle.
//! - [`open`]: the open role seats of a running match, for backfill.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod check;
pub mod open;
pub mod seat;
pub mod table;

pub use check::{check_composition, check_ticket_roles, RoleLists};
pub use table::RoleTable;

/// The seat of any role in `perTeam` (docs/rules.md, "Role queues").
pub const ANY: &str = "any";
/// Most `relax` steps of a composition.
pub const MAX_RELAX_STEPS: usize = 8;

/// `composition` of a game mode (docs/rules.md, "Role queues"): the role
/// seats of every team, e.g. `{"attribute": "roles", "perTeam": {"tank": 1,
/// "damage": 2, "support": 2}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({
    "attribute": "roles", "perTeam": {"tank": 1, "damage": 2, "support": 2},
    "relax": [{"afterSeconds": 120, "perTeam": {"tank": 1, "damage": 2, "support": 1, "any": 1}}]})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Composition {
    /// A `stringSet` attribute the mode declares, whose `values` are the
    /// roles; each ticket lists the roles its player will play (at least one).
    pub attribute: String,
    /// Seats per role on every team (counts >= 0, summing to the team
    /// size); the role `any` is a seat for any role.
    pub per_team: BTreeMap<String, u32>,
    /// Steps replacing `perTeam` once a group's anchor has waited
    /// `afterSeconds` (at most 8, `afterSeconds` strictly increasing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(max_items = 8))]
    pub relax: Vec<CompositionStep>,
}

/// One `relax` step of a [`Composition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompositionStep {
    /// Anchor wait (seconds, 0..=86400) from which this step's seats apply.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 86400))]
    pub after_seconds: f64,
    /// Seats per role on every team, as the composition's `perTeam`.
    pub per_team: BTreeMap<String, u32>,
}

/// One step's seats on every team: `counts[r]` seats of role `r` (an index
/// into [`Composition::roles`]) and `any` seats for any role.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoleSeats {
    /// Seats per role, by role index.
    pub counts: Vec<u32>,
    /// Seats any player may take.
    pub any: u32,
}

impl RoleSeats {
    /// Seats of one team (players).
    pub fn team_size(&self) -> u32 {
        self.counts.iter().sum::<u32>() + self.any
    }
}

impl Composition {
    /// The roles named by `perTeam` and every `relax` step (not `any`),
    /// sorted: a role's index is its bit in a player's role mask. At most
    /// 64 (an attribute's `values` are at most 64).
    pub fn roles(&self) -> Vec<&str> {
        let mut roles: Vec<&str> = self
            .per_team
            .keys()
            .chain(self.relax.iter().flat_map(|s| s.per_team.keys()))
            .map(String::as_str)
            .filter(|r| *r != ANY)
            .collect();
        roles.sort_unstable();
        roles.dedup();
        roles.truncate(64);
        roles
    }

    /// The seats in force for an anchor that has waited `wait` seconds:
    /// the last `relax` step reached, else `perTeam`.
    pub fn seats_at(&self, wait: f64) -> RoleSeats {
        let per_team = self
            .relax
            .iter()
            .rev()
            .find(|s| wait >= s.after_seconds)
            .map_or(&self.per_team, |s| &s.per_team);
        self.compile(per_team)
    }

    /// `per_team` (a step's seats, or a running team's open roles) as seats
    /// over [`Composition::roles`]' indices; a role outside them counts
    /// for nothing, `any` as `any`.
    pub fn compile(&self, per_team: &BTreeMap<String, u32>) -> RoleSeats {
        let roles = self.roles();
        RoleSeats {
            counts: roles
                .iter()
                .map(|r| per_team.get(*r).copied().unwrap_or(0))
                .collect(),
            any: per_team.get(ANY).copied().unwrap_or(0),
        }
    }

    /// The role name of index `r` (or `any` past the last role).
    pub fn role_name(&self, r: usize) -> String {
        self.roles().get(r).copied().unwrap_or(ANY).to_owned()
    }
}

/// Most ways [`bot_splits`] offers to split a bot match's humans.
const MAX_BOT_SPLITS: usize = 64;

/// Ways to split a bot match's humans over teams of `base` seats: `first`
/// (the split the pass planned), then the others with as many humans, every
/// team within its seats, evenest first, at most [`MAX_BOT_SPLITS`]. The
/// seating takes the first whose humans all get a role seat (docs/rules.md,
/// "Bots in role queues").
pub fn bot_splits(base: &[u32], first: &[u32]) -> Vec<Vec<u32>> {
    fn walk(base: &[u32], left: u32, at: usize, split: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if out.len() >= MAX_BOT_SPLITS * 4 {
            return;
        }
        if at == base.len() {
            if left == 0 {
                out.push(split.clone());
            }
            return;
        }
        let room_after: u32 = base[at + 1..].iter().sum();
        let low = left.saturating_sub(room_after);
        for n in (low..=base[at].min(left)).rev() {
            split.push(n);
            walk(base, left - n, at + 1, split, out);
            split.pop();
        }
    }
    let humans: u32 = first.iter().sum();
    let mut all = Vec::new();
    walk(
        base,
        humans,
        0,
        &mut Vec::with_capacity(base.len()),
        &mut all,
    );
    let spread = |s: &Vec<u32>| {
        let max = s.iter().max().copied().unwrap_or(0);
        let min = s.iter().min().copied().unwrap_or(0);
        max - min
    };
    all.retain(|s| s.as_slice() != first);
    all.sort_by_key(|s| (spread(s), s.iter().rev().copied().collect::<Vec<_>>()));
    all.truncate(MAX_BOT_SPLITS - 1);
    all.insert(0, first.to_vec());
    all
}

#[cfg(test)]
mod bot_split_tests {
    use super::bot_splits;

    #[test]
    fn the_planned_split_comes_first_then_the_evenest() {
        let splits = bot_splits(&[3, 3], &[2, 1]);
        assert_eq!(splits[0], vec![2, 1]);
        assert_eq!(splits[1], vec![1, 2]);
        assert!(splits.contains(&vec![3, 0]) && splits.contains(&vec![0, 3]));
        assert_eq!(splits.len(), 4);
        assert!(splits.iter().all(|s| s.iter().sum::<u32>() == 3));
        // Many teams: bounded.
        assert!(
            bot_splits(
                &[1; 40],
                &[1; 20].iter().chain(&[0; 20]).copied().collect::<Vec<_>>()
            )
            .len()
                <= 64
        );
    }
}
