//! Open backfills in the pool store: the seats of running matches that the
//! cycle may fill, kept beside the pool so that a fill is claimed in the
//! same atomic step as its searches (docs/backfill.md).
//!
//! Each backfill's live state is its [`OpenBackfill`] (what the cycle fits
//! against) plus a status (`open`, `filled`, `closed`) and a `revision`
//! that grows at every fill and every new roster. A fill names the
//! revision it was computed from and is refused ([`FillOutcome::Stale`])
//! if anything changed since: so two workers never fill the same seat, a
//! fill never uses a roster a `PUT` replaced, and a backfill closed while a
//! fill is being claimed ends with the fill or the close, never both.
//! Times are Unix seconds, handed in by the caller.

use super::{Claim, ModeKey, PoolError};
pub use matchplane_matchmaker::OpenBackfill;
use serde::{Deserialize, Serialize};

/// Where a backfill's live state stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackfillStatus {
    /// Seats are open and fills may take them.
    Open,
    /// A fill took the last open seat.
    Filled,
    /// The studio closed it.
    Closed,
}

impl BackfillStatus {
    /// The status as written (`open`, `filled`, `closed`).
    pub fn as_str(self) -> &'static str {
        match self {
            BackfillStatus::Open => "open",
            BackfillStatus::Filled => "filled",
            BackfillStatus::Closed => "closed",
        }
    }

    /// The status of its written form.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "open" => Some(BackfillStatus::Open),
            "filled" => Some(BackfillStatus::Filled),
            "closed" => Some(BackfillStatus::Closed),
            _ => None,
        }
    }
}

/// A backfill's live state: the [`OpenBackfill`] with its current seats and
/// revision, and its status.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBackfill {
    /// What the cycle fits against; `open_seats` and `revision` current.
    pub backfill: OpenBackfill,
    /// Its status.
    pub status: BackfillStatus,
}

/// What a change of a backfill's state found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackfillChange {
    /// Done; the backfill's revision is now this.
    Changed {
        /// The new revision.
        revision: u64,
    },
    /// The backfill was no longer open (filled or closed): nothing changed.
    NotOpen(BackfillStatus),
    /// No such backfill in this mode.
    Unknown,
}

/// A fill to claim: the searches (a [`Claim`] into the running match, its
/// record the `match.backfilled` body) and the seats they take.
#[derive(Debug, Clone, PartialEq)]
pub struct FillClaim {
    /// `bf_…` of the backfill.
    pub backfill_id: String,
    /// The backfill's revision the fill was computed from.
    pub revision: u64,
    /// Seats taken per team, in shape order (players).
    pub seats_taken: Vec<u32>,
    /// In a role queue, role seats taken per team and role, as
    /// [`matchplane_matchmaker::ProposedFill::roles_taken`] lists them;
    /// empty otherwise.
    pub roles_taken: Vec<u32>,
    /// The searches and the record (`match_id` is the running match).
    pub claim: Claim,
    /// The backfill's view for its later fills, stored with the claim:
    /// the view the fill was computed from with the seated players in its
    /// roster ([`OpenBackfill::with_fill_roster`]), so that a later fill
    /// agrees with them under the mode's rules. `None` leaves the view as
    /// it is (a mode without rules).
    pub view_after: Option<OpenBackfill>,
}

impl FillClaim {
    /// The seat counters this fill takes: `seats_taken`, then
    /// `roles_taken` (the order of [`OpenBackfill::seat_counters`]).
    pub fn counters_taken(&self) -> Vec<u32> {
        self.seats_taken
            .iter()
            .chain(&self.roles_taken)
            .copied()
            .collect()
    }
}

/// What a fill claim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FillOutcome {
    /// The searches are matched, the seats taken, the record in the
    /// outbox under this id.
    Claimed {
        /// The outbox entry id.
        outbox_id: String,
        /// The backfill's status after the fill (`filled` once no seat is
        /// left).
        status: BackfillStatus,
    },
    /// The backfill changed since the fill was computed (another fill, a
    /// new roster, a close, its expiry), or has fewer seats than the fill
    /// takes: nothing was claimed.
    Stale,
    /// Some searches were no longer live; nothing was claimed.
    Conflict {
        /// The tickets that were no longer live.
        gone: Vec<String>,
    },
    /// The caller's fencing token is not the mode's lease: nothing happened.
    LeaseLost,
}

/// Open backfills of a mode, their changes and their fills.
#[async_trait::async_trait]
pub trait Backfills: Send + Sync {
    /// Opens `backfill` (status `open`, its `revision` as given) unless the
    /// store has a backfill under its id already: then nothing changes, so
    /// an open repeated (the outbox consumer re-creating an automatic
    /// backfill whose claim's worker died before opening it) never resets
    /// seats a fill took, nor reopens a closed one. Returns whether this
    /// call opened it.
    async fn open_backfill(
        &self,
        mode: &ModeKey,
        backfill: &OpenBackfill,
    ) -> Result<bool, PoolError>;

    /// Replaces an open backfill's roster view (seats, mean MMR, expiry…)
    /// with `backfill`'s; the revision grows by one. Refused (nothing
    /// changes) when it is no longer open.
    async fn replace_backfill(
        &self,
        mode: &ModeKey,
        backfill: &OpenBackfill,
    ) -> Result<BackfillChange, PoolError>;

    /// Closes an open backfill (status `closed`, revision + 1), in one
    /// atomic step with respect to fills.
    async fn close_backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
    ) -> Result<BackfillChange, PoolError>;

    /// A backfill's live state, if the store has it.
    async fn backfill(
        &self,
        mode: &ModeKey,
        backfill_id: &str,
    ) -> Result<Option<LiveBackfill>, PoolError>;

    /// Every open backfill of `mode`, in no order (expired ones included:
    /// the cycle skips them and the caller may forget them).
    async fn open_backfills(&self, mode: &ModeKey) -> Result<Vec<OpenBackfill>, PoolError>;

    /// Drops a backfill's live state (once it is expired, filled or closed
    /// and its record is in the database).
    async fn forget_backfill(&self, mode: &ModeKey, backfill_id: &str) -> Result<(), PoolError>;

    /// Claims a fill atomically: under `lease_token` only; only if the
    /// backfill is open, at `fill.revision`, not expired at `now` and has
    /// the seats (and in a role queue the role seats); only if every
    /// search is live. Then the searches end as
    /// matched into the running match, the seats are taken (status
    /// `filled` when none is left), the revision grows and the record goes
    /// to the outbox, all in one step.
    ///
    /// Errors: [`PoolError::InvalidClaim`] as for a match's claim, or seat
    /// counts that do not add up to the tickets.
    async fn claim_fill(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        fill: &FillClaim,
        now: f64,
    ) -> Result<FillOutcome, PoolError>;
}

/// Checks a fill's shape before it reaches a backend.
pub(crate) fn check_fill(fill: &FillClaim) -> Result<(), PoolError> {
    super::types::check_claim(&fill.claim)?;
    let seats: u64 = fill.seats_taken.iter().map(|s| u64::from(*s)).sum();
    if seats != fill.claim.ticket_ids.len() as u64 {
        return Err(PoolError::InvalidClaim(format!(
            "{seats} seats taken for {} tickets",
            fill.claim.ticket_ids.len()
        )));
    }
    Ok(())
}

/// The seats left once `taken` are taken from `open`, or `None` if a team
/// has fewer open seats than taken (or the shapes differ).
pub(crate) fn seats_after(open: &[u32], taken: &[u32]) -> Option<Vec<u32>> {
    if open.len() != taken.len() {
        return None;
    }
    open.iter()
        .zip(taken)
        .map(|(o, t)| o.checked_sub(*t))
        .collect()
}
