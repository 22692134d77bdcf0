//! Backfill (join in progress): filling the open seats of a running match
//! with waiting candidates.
//!
//! - [`config`]: the mode's `backfill` block and its validation;
//! - [`roster`]: a studio's current roster checked against the match's
//!   shape, and the open seats it leaves;
//! - [`fit`]: whether one candidate fits one backfill (MMR, ping, region;
//!   the rules over attributes are checked by the pass, against the roster
//!   and the fill's other newcomers);
//! - `seats`: one backfill's open seats (per team, per role in a role
//!   queue) as one fill takes them;
//! - [`pass`]: the cycle's first step, which offers candidates to the open
//!   backfills (oldest first, candidates in wait order) before new matches
//!   form, and [`run_cycle_with_backfills`], what the worker and the
//!   simulator call.

pub mod config;
pub mod fit;
pub mod pass;
pub mod roster;
mod seats;

pub use config::BackfillConfig;
pub use pass::{fill_pass, run_cycle_with_backfills, CycleWithFills, ProposedFill};

use arcstr::ArcStr;
use serde::{Deserialize, Serialize};

/// An open backfill as the cycle sees it: its seats and what its match's
/// roster looks like to a newcomer.
///
/// Times are seconds on the pool's clock (the `now` of the cycle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenBackfill {
    /// `bf_…` id of the request.
    pub backfill_id: ArcStr,
    /// `mat_…` id of the running match.
    pub match_id: ArcStr,
    /// Changes at every fill and every new roster: a fill is claimed only
    /// under the revision it was computed from, so it never uses a stale
    /// roster nor takes a seat another fill took.
    pub revision: u64,
    /// Open seats per team, in match-shape order (players).
    pub open_seats: Vec<u32>,
    /// When the request was opened (seconds): its age widens its MMR range
    /// as a candidate's wait widens the candidate's.
    pub opened_at: f64,
    /// After this (seconds) the request is `expired` and takes nobody.
    pub expires_at: f64,
    /// Mean MMR of the current roster; `None` when no roster player has one
    /// (no MMR rule applies then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_mmr: Option<f64>,
    /// Pings (milliseconds) of the match's players when it was made; a Ping
    /// mode's newcomer must be within `maxDelta` of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pings: Vec<f64>,
    /// The match's region; a newcomer's latency there must be within its
    /// ceiling. `None` for a match made without regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<ArcStr>,
    /// The roster: every player on it (a fill never seats one of them
    /// again), with their values for the mode's rules
    /// (docs/rules.md#backfill), which a fill satisfies every rule
    /// against (none without rules).
    #[serde(default, skip_serializing_if = "crate::rules::RosterValues::is_empty")]
    pub roster: crate::rules::RosterValues,
    /// In a role-queue mode, the open seats of each team by role
    /// (docs/rules.md, "Backfill by role"): each team's counts sum to its
    /// `open_seats`, and a newcomer takes a seat of a role it listed (or an
    /// `any` seat). Empty in a mode without `composition`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_roles: Vec<crate::roles::open::OpenRoles>,
}

impl OpenBackfill {
    /// Seats still open over all teams (players).
    pub fn seats_left(&self) -> u32 {
        self.open_seats.iter().sum()
    }

    /// The seat counters a fill decrements, as the pool store keeps them:
    /// `open_seats`, then each team's `open_roles` counts in name order.
    pub fn seat_counters(&self) -> Vec<u32> {
        self.open_seats
            .iter()
            .copied()
            .chain(self.open_roles.iter().flat_map(|t| t.values().copied()))
            .collect()
    }

    /// Sets `open_seats` and `open_roles` from `counters` (as
    /// [`OpenBackfill::seat_counters`] gives them, against this backfill's
    /// teams and role names). Returns `false`, changing nothing, when the
    /// count does not match.
    pub fn set_seat_counters(&mut self, counters: &[u32]) -> bool {
        let teams = self.open_seats.len();
        let roles: usize = self.open_roles.iter().map(|t| t.len()).sum();
        if counters.len() != teams + roles {
            return false;
        }
        self.open_seats.copy_from_slice(&counters[..teams]);
        let mut rest = counters[teams..].iter();
        for team in &mut self.open_roles {
            for (n, c) in team.values_mut().zip(rest.by_ref()) {
                *n = *c;
            }
        }
        true
    }

    /// This backfill's view once `fill` is claimed, for its later fills:
    /// the roster grows by the players the fill seated, each with its
    /// values (defaults filled in), so that every later fill satisfies the
    /// rules against them too (docs/rules.md#backfill). The seat counters
    /// and the revision are left as they are: the pool store moves them.
    pub fn with_fill_roster(&self, fill: &ProposedFill) -> OpenBackfill {
        let mut grown = self.clone();
        for player in fill.teams.iter().flat_map(|t| &t.players) {
            grown.roster.players.push(crate::rules::RosterMember {
                player_id: player.player_id.to_string(),
                attributes: player.attributes.to_values(),
            });
        }
        grown
    }
}
