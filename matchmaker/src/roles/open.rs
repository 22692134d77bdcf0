//! The open role seats of a running match (docs/rules.md, "Backfill by
//! role"): the composition's seats minus the roles its players hold.
//!
//! A player holding a role takes a seat of that role while one is left,
//! else an `any` seat; a player holding `any` takes an `any` seat. The
//! seats are those of the first of `perTeam` and its `relax` steps (in
//! order) in which every team's players fit: a match formed under a relaxed
//! step keeps the seats it was formed with.

use super::{Composition, ANY};
use std::collections::BTreeMap;

/// Open seats of one team by role name, `any` included (zeros kept, so
/// every team lists the same roles): `{"any": 0, "damage": 1, "tank": 0}`.
pub type OpenRoles = BTreeMap<String, u32>;

/// A team whose players' roles fit none of the composition's steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolesDoNotFit {
    /// The team (index into the match's teams) that does not fit `perTeam`.
    pub team: usize,
    /// What it holds too many of, in words.
    pub message: String,
}

/// The open role seats of each team, whose players hold `held[t]` (role
/// names, `any` for a player in an `any` seat).
///
/// # Errors
/// [`RolesDoNotFit`] naming the first team that does not fit `perTeam`
/// when no step holds every team.
pub fn open_roles(
    composition: &Composition,
    held: &[Vec<&str>],
) -> Result<Vec<OpenRoles>, RolesDoNotFit> {
    let steps =
        std::iter::once(&composition.per_team).chain(composition.relax.iter().map(|s| &s.per_team));
    for per_team in steps {
        let open: Option<Vec<OpenRoles>> = held.iter().map(|h| left_after(per_team, h)).collect();
        if let Some(open) = open {
            return Ok(open);
        }
    }
    let (team, over) = held
        .iter()
        .enumerate()
        .find_map(|(t, h)| overflow(&composition.per_team, h).map(|o| (t, o)))
        .unwrap_or((0, String::new()));
    Err(RolesDoNotFit {
        team,
        message: format!(
            "team {team} holds more {over} players than the composition seats, \
             in perTeam and in every relax step"
        ),
    })
}

/// `per_team` with a seat taken for each role of `held`, or `None` when a
/// player finds no seat.
fn left_after(per_team: &BTreeMap<String, u32>, held: &[&str]) -> Option<OpenRoles> {
    let mut left: OpenRoles = per_team.clone();
    left.entry(ANY.to_owned()).or_insert(0);
    for role in held {
        let own = left.get_mut(*role).filter(|n| **n > 0 && *role != ANY);
        match own {
            Some(n) => *n -= 1,
            None => {
                let any = left.get_mut(ANY)?;
                *any = any.checked_sub(1)?;
            }
        }
    }
    Some(left)
}

/// The role a team holds too many of under `per_team`, if any.
fn overflow(per_team: &BTreeMap<String, u32>, held: &[&str]) -> Option<String> {
    left_after(per_team, held).is_none().then(|| {
        let mut count: BTreeMap<&str, u32> = BTreeMap::new();
        for r in held {
            *count.entry(r).or_insert(0) += 1;
        }
        count
            .iter()
            .find(|(r, n)| **n > per_team.get(**r).copied().unwrap_or(0))
            .map_or_else(|| ANY.to_owned(), |(r, _)| (*r).to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roles::CompositionStep;

    fn composition() -> Composition {
        Composition {
            attribute: "roles".into(),
            per_team: [("tank", 1), ("damage", 2), ("support", 2)]
                .into_iter()
                .map(|(r, n)| (r.to_owned(), n))
                .collect(),
            relax: vec![CompositionStep {
                after_seconds: 60.0,
                per_team: [("tank", 1), ("damage", 2), ("support", 1), ("any", 1)]
                    .into_iter()
                    .map(|(r, n)| (r.to_owned(), n))
                    .collect(),
            }],
        }
    }

    #[test]
    fn open_roles_are_the_seats_minus_the_roster() {
        let open = open_roles(
            &composition(),
            &[vec!["tank", "damage"], vec!["support", "support", "damage"]],
        )
        .unwrap();
        assert_eq!(open[0]["tank"], 0);
        assert_eq!(open[0]["damage"], 1);
        assert_eq!(open[0]["support"], 2);
        assert_eq!(open[0]["any"], 0);
        assert_eq!(open[1]["tank"], 1);
        assert_eq!(open[1]["support"], 0);
    }

    #[test]
    fn a_roster_formed_under_a_relaxed_step_keeps_its_seats() {
        // Three damage on team 0: only the relaxed step (with an `any`
        // seat) holds it, so every team's seats come from that step.
        let open = open_roles(
            &composition(),
            &[vec!["damage", "damage", "damage"], vec!["any"]],
        )
        .unwrap();
        assert_eq!(open[0]["any"], 0);
        assert_eq!(open[0]["support"], 1);
        assert_eq!(open[1]["any"], 0);
        assert_eq!(open[1]["damage"], 2);
    }

    #[test]
    fn a_roster_no_step_holds_names_its_team() {
        let err = open_roles(&composition(), &[vec![], vec!["tank", "tank", "tank"]]).unwrap_err();
        assert_eq!(err.team, 1);
        assert!(err.message.contains("tank"), "{}", err.message);
    }
}
