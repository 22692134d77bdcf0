//! The simulation's figures per role (docs/rules.md, "Role queues"): how
//! many players each role seated and how long they waited, so a role
//! shortage ("tanks wait 20 s, damage 3 min") shows in a report.

use super::Percentiles;
use crate::cycle::ProposedMatch;
use serde::Serialize;
use std::collections::BTreeMap;

/// One role's figures in a report's `stats.roles`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleStats {
    /// Matches with at least one player seated in the role.
    pub matches: usize,
    /// Players seated in the role.
    pub matched_players: usize,
    /// Seconds from arrival to match of those players.
    pub wait_seconds: Percentiles,
}

/// The waits of the players each role seated, gathered over a run.
#[derive(Debug, Default)]
pub(super) struct RoleTally {
    waits: BTreeMap<String, Vec<f64>>,
    matches: BTreeMap<String, usize>,
}

impl RoleTally {
    /// Counts match `m`, each seated player's wait from `wait_of` (its
    /// ticket id and the wait the core gave it; `None`: not matched after
    /// all, as a requeued member of a proposal).
    pub fn matched(&mut self, m: &ProposedMatch, wait_of: impl Fn(&str, f64) -> Option<f64>) {
        let mut seen: Vec<&str> = Vec::new();
        for p in m.teams.iter().flat_map(|t| &t.players) {
            let Some(role) = p.role.as_deref() else {
                continue;
            };
            let Some(wait) = wait_of(&p.ticket_id, p.wait_seconds) else {
                continue;
            };
            self.waits.entry(role.to_owned()).or_default().push(wait);
            if !seen.contains(&role) {
                seen.push(role);
                *self.matches.entry(role.to_owned()).or_default() += 1;
            }
        }
    }

    /// The figures per role; empty when no player was seated by role.
    pub fn finish(self) -> BTreeMap<String, RoleStats> {
        let matches = self.matches;
        self.waits
            .into_iter()
            .map(|(role, waits)| {
                let stats = RoleStats {
                    matches: matches.get(&role).copied().unwrap_or(0),
                    matched_players: waits.len(),
                    wait_seconds: Percentiles::of(&waits),
                };
                (role, stats)
            })
            .collect()
    }
}
