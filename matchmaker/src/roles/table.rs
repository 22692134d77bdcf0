//! Each candidate's role lists for one cycle (docs/rules.md, "Role
//! queues"): one bit mask per player over the composition's roles, read
//! once from the pool.

use super::RoleSeats;
use crate::candidate::Candidate;
use crate::config::GameModeConfig;
use crate::rules::value::{effective, AttributeValue};
use crate::search::Search;
use std::collections::BTreeMap;

/// The role masks of one cycle's candidates.
#[derive(Debug, Clone)]
pub struct RoleTable {
    roles: Vec<String>,
    /// The roles' names as shared strings, `any` last: what a seated
    /// player's `role` holds (a count increment per player, no copy).
    names: Vec<arcstr::ArcStr>,
    /// Every candidate's members' masks, candidate after candidate.
    masks: Vec<u64>,
    /// Where candidate `c`'s masks start in `masks` (and one past the last).
    starts: Vec<usize>,
    /// Each candidate's wait (seconds): an anchor's picks its step.
    waits: Vec<f64>,
    /// The seats of `perTeam` and of each `relax` step, compiled once.
    steps: Vec<(f64, RoleSeats)>,
    /// No seats (never read: `steps` always holds `perTeam`).
    empty: RoleSeats,
}

impl RoleTable {
    /// The table of `candidates` (their searches in `pool`), waiting
    /// `waits[c]` seconds; `None` when the mode has no `composition`.
    pub fn build(
        config: &GameModeConfig,
        pool: &[Search],
        candidates: &[Candidate],
        waits: &[f64],
    ) -> Option<Self> {
        let composition = config.composition.as_ref()?;
        let roles: Vec<String> = composition.roles().into_iter().map(String::from).collect();
        let declaration = config
            .attributes
            .as_ref()
            .and_then(|d| d.get(&composition.attribute));
        let mut masks = Vec::with_capacity(candidates.len());
        let mut starts = Vec::with_capacity(candidates.len() + 1);
        for c in candidates {
            starts.push(masks.len());
            for &i in &c.searches {
                let own = pool[i].attributes.get(&composition.attribute);
                let value = match declaration {
                    Some(d) => effective(d, own),
                    None => own.cloned(),
                };
                masks.push(match value {
                    Some(AttributeValue::Set(items)) => mask_of(&roles, &items),
                    _ => 0,
                });
            }
        }
        starts.push(masks.len());
        let names = roles
            .iter()
            .map(|r| arcstr::ArcStr::from(r.as_str()))
            .chain(std::iter::once(arcstr::ArcStr::from(super::ANY)))
            .collect();
        let steps = std::iter::once(f64::NEG_INFINITY)
            .chain(composition.relax.iter().map(|s| s.after_seconds))
            .map(|after| (after, composition.seats_at(after)))
            .collect();
        Some(Self {
            steps,
            empty: RoleSeats::default(),
            names,
            roles,
            masks,
            starts,
            waits: waits.to_vec(),
        })
    }

    /// Candidate `c`'s members' masks, in member order.
    pub fn masks(&self, c: usize) -> &[u64] {
        &self.masks[self.starts[c]..self.starts[c + 1]]
    }

    /// The seats in force for a group anchored by candidate `anchor`.
    pub fn seats_for(&self, anchor: usize) -> &RoleSeats {
        let wait = self.waits.get(anchor).copied().unwrap_or(0.0);
        // The last step reached (`perTeam` first, at no wait at all).
        self.steps
            .iter()
            .rev()
            .find(|(after, _)| wait >= *after)
            .or(self.steps.first())
            .map(|(_, seats)| seats)
            .unwrap_or(&self.empty)
    }

    /// The role of index `r` (`any` past the last role).
    pub fn role_name(&self, r: usize) -> &str {
        self.roles.get(r).map_or(super::ANY, String::as_str)
    }

    /// [`RoleTable::role_name`] as a shared string.
    pub fn role_arc(&self, r: usize) -> arcstr::ArcStr {
        let any = self.names.len().saturating_sub(1);
        self.names.get(r.min(any)).cloned().unwrap_or_default()
    }

    /// The seats a group of players `masks` leaves empty on `teams` teams
    /// of `seats` (its players pooled, roles before `any`), by role name:
    /// what the group lacked (`short` of `NO_ROLE_SEATING`).
    pub fn lacking(&self, masks: &[u64], seats: &RoleSeats, teams: u32) -> BTreeMap<String, u32> {
        let mut left: Vec<u32> = seats.counts.iter().map(|c| c * teams).collect();
        left.push(seats.any * teams);
        if let Some(given) = super::seat::assign_scaled(masks, seats, teams) {
            for r in given {
                left[r] = left[r].saturating_sub(1);
            }
        }
        left.iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(r, n)| (self.role_name(r).to_owned(), *n))
            .collect()
    }
}

/// Searches left `waiting` by each role they listed (docs/rules.md, "Role
/// queues"): a search listing two roles counts for both. Empty without a
/// `composition`.
pub fn waiting_by_role(
    config: &GameModeConfig,
    pool: &[Search],
    waiting: &[crate::cycle::WaitingSearch],
) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    let Some(c) = &config.composition else {
        return counts;
    };
    let left: rustc_hash::FxHashSet<&str> = waiting.iter().map(|w| w.ticket_id.as_str()).collect();
    let declaration = config.attributes.as_ref().and_then(|d| d.get(&c.attribute));
    for s in pool.iter().filter(|s| left.contains(s.ticket_id.as_str())) {
        let own = s.attributes.get(&c.attribute);
        let value = match declaration {
            Some(d) => effective(d, own),
            None => own.cloned(),
        };
        if let Some(AttributeValue::Set(items)) = value {
            for role in items {
                *counts.entry(role).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// A role list's mask over `roles` (sorted); a role outside them sets no
/// bit (its player can take `any` seats only).
pub fn mask_of(roles: &[String], items: &[String]) -> u64 {
    items
        .iter()
        .filter_map(|r| roles.binary_search(r).ok())
        .fold(0, |m, i| m | (1u64 << i))
}
