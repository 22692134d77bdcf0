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
    /// Each candidate's [`RoleTable::signature`] ([`NO_SIGNATURE`] when
    /// it has none): one read of a walk's joiner instead of two.
    signatures: Vec<u64>,
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
        // Every search's mask first, in pool order (the order the searches
        // sit in memory); candidates, which meet the pool longest-waiting
        // first, then gather from this compact column.
        let default = declaration.and_then(|d| effective(d, None));
        let by_search: Vec<u64> = pool
            .iter()
            .map(|search| {
                let own = search.attributes.get(&composition.attribute);
                match own.or(default.as_ref()) {
                    Some(AttributeValue::Set(items)) => mask_of(&roles, items),
                    _ => 0,
                }
            })
            .collect();
        let mut masks = Vec::with_capacity(candidates.len());
        let mut starts = Vec::with_capacity(candidates.len() + 1);
        for c in candidates {
            starts.push(masks.len());
            masks.extend(c.searches.iter().map(|&i| by_search[i]));
        }
        starts.push(masks.len());
        let signatures = starts
            .windows(2)
            .map(|w| signature(&masks[w[0]..w[1]]).unwrap_or(NO_SIGNATURE))
            .collect();
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
            signatures,
            waits: waits.to_vec(),
        })
    }

    /// Candidate `c`'s members' masks, in member order.
    pub fn masks(&self, c: usize) -> &[u64] {
        &self.masks[self.starts[c]..self.starts[c + 1]]
    }

    /// Candidate `c`'s role lists as one number (see [`signature`]), or
    /// `None` when they do not fit one.
    pub fn signature(&self, c: usize) -> Option<u64> {
        self.signatures
            .get(c)
            .copied()
            .filter(|s| *s != NO_SIGNATURE)
    }

    /// Candidate `c`'s role lists as stored: its [`signature`], or
    /// `u64::MAX` when it has none (never 0).
    pub fn signature_raw(&self, c: usize) -> u64 {
        self.signatures.get(c).copied().unwrap_or(NO_SIGNATURE)
    }

    /// [`RoleTable::signature`] from [`RoleTable::signature_raw`].
    pub fn signature_of_raw(raw: u64) -> Option<u64> {
        (raw != NO_SIGNATURE).then_some(raw)
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

    /// The mask of the roles `names` holds (`any` aside): the bits a
    /// candidate's role list must share to take one of them.
    pub fn mask_of_names(&self, names: &BTreeMap<String, u32>) -> u64 {
        self.roles
            .iter()
            .enumerate()
            .filter(|(_, name)| names.contains_key(*name))
            .fold(0, |mask, (r, _)| mask | 1 << r)
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

/// A [`RoleTable`] signature no candidate has.
const NO_SIGNATURE: u64 = u64::MAX;

/// The role lists of one candidate as one number: its member count, then
/// its members' masks sorted, 16 bits each (up to 3 members); `None` when
/// they do not fit it. Two candidates of one signature are alike to role
/// seating (the order of a party's members does not matter to it).
pub fn signature(masks: &[u64]) -> Option<u64> {
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

/// The masks a [`signature`] holds, sorted.
pub fn signature_masks(signature: u64) -> smallvec::SmallVec<[u64; 3]> {
    let len = (signature >> 48) as usize;
    (0..len.min(3))
        .map(|k| (signature >> (32 - 16 * k)) & 0xffff)
        .collect()
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
        // The ticket's own value as it is, else the declaration's default.
        let default = match (own, declaration) {
            (None, Some(d)) => effective(d, None),
            _ => None,
        };
        if let Some(AttributeValue::Set(items)) = own.or(default.as_ref()) {
            for role in items {
                match counts.get_mut(role.as_str()) {
                    Some(n) => *n += 1,
                    None => {
                        counts.insert(role.clone(), 1);
                    }
                }
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
