//! The values that cross the [`super::PoolStore`] interface (its errors
//! are in `errors.rs`).

use super::PoolError;
use matchplane_matchmaker::Search;
use serde::{Deserialize, Serialize};

/// One game mode of one project: the unit of a pool, a lease and an outbox.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModeKey {
    /// `prj_…` id of the project.
    pub project_id: String,
    /// The mode's name (`^[a-z0-9][a-z0-9_-]{0,62}$`).
    pub mode: String,
}

impl ModeKey {
    /// A mode key from its parts.
    pub fn new(project_id: impl Into<String>, mode: impl Into<String>) -> Self {
        Self {
            project_id: project_id.into(),
            mode: mode.into(),
        }
    }
}

/// How a search ended, as kept after it left the pool (for status reads and
/// for `TICKET_ALREADY_MATCHED`). Serialised as `{"status":"matched",…}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Ended {
    /// Claimed into a match.
    #[serde(rename_all = "camelCase")]
    Matched {
        /// `mat_…` id of the match.
        match_id: String,
    },
    /// Its match was released by the studio (or not assigned in time,
    /// docs/acceptance.md): the ticket may search again until it expires, its search
    /// resuming at the record's `queuedAt` (its first one).
    #[serde(rename_all = "camelCase")]
    Released {
        /// `mat_…` id of the released match.
        match_id: String,
    },
    /// Cancelled by the client, the studio, or a closed socket.
    Cancelled,
    /// Its deadline passed (ticket expiry or REST poll liveness).
    Expired,
    /// Failed with a documented code (e.g. `GAME_MODE_DISABLED`).
    Failed {
        /// The documented error code.
        code: String,
        /// A human-readable explanation.
        message: String,
    },
}

/// An ended search's record: how it ended, when it had started and when it
/// ended (Unix seconds), and why it expired. Serialised flat, as
/// `{"status":"expired","endedAt":…,"queuedAt":…,"reason":…}`; records
/// written before these fields existed read with them `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedSearch {
    /// How it ended.
    #[serde(flatten)]
    pub how: Ended,
    /// When the search had started (its `queuedAt`, Unix seconds). The
    /// claim does not keep it (a match has each player's wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_at: Option<f64>,
    /// When it ended (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<f64>,
    /// Why an expired search expired (`PONG_TIMEOUT`, …), or why a
    /// cancelled one was cancelled by the service ([`SERVER_STOPPING`]), if
    /// the caller said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether a WebSocket held the search ([`crate::tickets::Hold::Socket`]):
    /// a socket's search the sweep ends before its ticket expires lapsed
    /// with its socket's lease, not a REST poll.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub socket: bool,
}

impl EndedSearch {
    /// `how`, ended at `ended_at`, start time and reason unknown yet.
    pub fn new(how: Ended, ended_at: f64) -> Self {
        Self {
            how,
            queued_at: None,
            ended_at: Some(ended_at),
            reason: None,
            socket: false,
        }
    }

    /// The record of a search ended with `outcome` at `ended_at`.
    pub fn of(outcome: &EndOutcome, ended_at: f64) -> Self {
        let reason = match outcome {
            EndOutcome::ExpiredFor { reason } | EndOutcome::CancelledFor { reason } => {
                Some(reason.clone())
            }
            _ => None,
        };
        Self {
            reason,
            ..Self::new(Ended::from(outcome), ended_at)
        }
    }

    /// Whether the service ended it, not its player (failed, or cancelled
    /// by a stopping API instance): in a proposal, nobody is responsible
    /// (docs/acceptance.md, "How a proposal ends").
    pub fn ended_by_service(&self) -> bool {
        match &self.how {
            Ended::Failed { .. } => true,
            Ended::Cancelled => self.reason.as_deref() == Some(SERVER_STOPPING),
            _ => false,
        }
    }

    /// Seconds it waited, when both ends are known.
    pub fn wait_seconds(&self) -> Option<f64> {
        Some((self.ended_at? - self.queued_at?).max(0.0))
    }
}

/// Unix seconds now, for the stores' `endedAt` (never for a rule of the
/// pool: those take the caller's `now`).
pub(crate) fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// How [`super::Searches::end_search`] ends a search (a claim alone ends one
/// as matched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndOutcome {
    /// See [`Ended::Cancelled`].
    Cancelled,
    /// See [`Ended::Expired`].
    Expired,
    /// [`Ended::Expired`], with the reason kept in the record (docs/searching.md#statuses:
    /// `PONG_TIMEOUT`, `REST_POLL_LAPSED`, `SOCKET_LAPSED`, `TICKET_TTL`).
    ExpiredFor {
        /// The reason code.
        reason: String,
    },
    /// [`Ended::Cancelled`], with the reason kept in the record: the
    /// service's own, [`SERVER_STOPPING`] (docs/searching.md, "Closing").
    CancelledFor {
        /// The reason code.
        reason: String,
    },
    /// See [`Ended::Failed`].
    Failed {
        /// The documented error code.
        code: String,
        /// A human-readable explanation.
        message: String,
    },
}

/// The reason of a search cancelled because the API instance holding its
/// WebSocket stopped (docs/searching.md, "Closing"): nobody's decline.
pub const SERVER_STOPPING: &str = "SERVER_STOPPING";

impl From<&EndOutcome> for Ended {
    fn from(outcome: &EndOutcome) -> Self {
        match outcome {
            EndOutcome::Cancelled | EndOutcome::CancelledFor { .. } => Ended::Cancelled,
            EndOutcome::Expired | EndOutcome::ExpiredFor { .. } => Ended::Expired,
            EndOutcome::Failed { code, message } => Ended::Failed {
                code: code.clone(),
                message: message.clone(),
            },
        }
    }
}

/// What [`super::Searches::end_search`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndResult {
    /// The search was live; this call ended it.
    Ended,
    /// A claim took the search first: it is matched and cannot be ended.
    Matched {
        /// `mat_…` id of its match.
        match_id: String,
    },
    /// The search was not live (unknown, or already ended otherwise).
    NotLive,
}

/// A live search as a status read shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveSearch {
    /// The search, with its current `ping_ms`.
    pub search: Search,
    /// When it expires unless touched (Unix seconds).
    pub deadline: f64,
    /// The last cycle's `waitingReason` (JSON text), once a cycle saw it.
    pub waiting_reason: Option<String>,
    /// Whether a WebSocket holds it ([`crate::tickets::Hold::Socket`]): its
    /// deadline is the socket's lease, which the socket renews, not a
    /// REST poll's.
    pub socket: bool,
}

/// Where a ticket's search stands.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchState {
    /// Waiting in the pool.
    Live(LiveSearch),
    /// Left the pool.
    Ended(EndedSearch),
}

impl SearchState {
    /// How it ended, if it did.
    pub fn into_ended(self) -> Option<Ended> {
        match self {
            SearchState::Ended(ended) => Some(ended.how),
            SearchState::Live(_) => None,
        }
    }
}

/// A group to claim into one match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// `mat_…` id of the match, kept with each claimed search.
    pub match_id: String,
    /// Every ticket of the group, each once.
    pub ticket_ids: Vec<String>,
    /// The player of each ticket, in the same order (as the pool snapshot
    /// gave them). A ticket whose player is not this one is treated as no
    /// longer live: the claim conflicts, it never takes another search.
    pub player_ids: Vec<String>,
    /// The match record (JSON text) appended to the mode's outbox.
    pub record_json: String,
}

impl Claim {
    /// The claim of every player of `teams` (a new match's, or a fill's
    /// newcomers), team by team, into `match_id`, with its record.
    pub fn of_teams(
        match_id: impl Into<String>,
        teams: &[matchplane_matchmaker::ProposedTeam],
        record_json: String,
    ) -> Self {
        let players = || teams.iter().flat_map(|t| t.players.iter());
        Self {
            match_id: match_id.into(),
            ticket_ids: players().map(|p| p.ticket_id.to_string()).collect(),
            player_ids: players().map(|p| p.player_id.to_string()).collect(),
            record_json,
        }
    }
}

/// What a claim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// Every search was claimed; the record is in the outbox under this id.
    Claimed {
        /// The outbox entry id.
        outbox_id: String,
    },
    /// Some searches were no longer live; nothing was claimed.
    Conflict {
        /// The tickets that were no longer live.
        gone: Vec<String>,
    },
    /// The caller's fencing token is not the mode's current lease: nothing
    /// was claimed, and the caller must stop working on this mode.
    LeaseLost,
}

/// One match record waiting in a mode's outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// The entry id, to pass to [`super::Outbox::ack_outbox`].
    pub id: String,
    /// `mat_…` id of the match.
    pub match_id: String,
    /// The record as given to the claim.
    pub record_json: String,
}

/// Where one player may hold one live search (docs/acceptance.md, the project setting
/// `playerSearchScope`): the add steps of both stores enforce it
/// atomically.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum PlayerSearchScope {
    /// One live search per player per mode (docs/searching.md): the default.
    #[default]
    Mode,
    /// One live search per player in the whole project: a player searching
    /// (or proposed) in one mode is refused in every mode.
    Project,
}

impl PlayerSearchScope {
    /// The setting's wire word: `mode` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mode => "mode",
            Self::Project => "project",
        }
    }

    /// The scope a wire word names, `None` for any other word.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "mode" => Some(Self::Mode),
            "project" => Some(Self::Project),
            _ => None,
        }
    }
}

/// Median of samples (mean of the two middle ones for an even count); `None`
/// for no sample. Shared by both stores so they agree to the bit.
pub(crate) fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => sorted.get(n / 2).copied(),
        _ => Some((sorted.get(n / 2 - 1)? + sorted.get(n / 2)?) / 2.0),
    }
}

/// The most tickets one claim may hold: well above the largest tier's match
/// size (200), well below what one Lua `unpack` takes (about 8 000).
pub(crate) const MAX_CLAIM: usize = 1_000;

/// Checks a claim's shape before it reaches a backend.
pub(crate) fn check_claim(claim: &Claim) -> Result<(), PoolError> {
    if claim.ticket_ids.is_empty() {
        return Err(PoolError::InvalidClaim("no ticket".into()));
    }
    if claim.ticket_ids.len() > MAX_CLAIM {
        return Err(PoolError::InvalidClaim(format!(
            "{} tickets, more than {MAX_CLAIM}",
            claim.ticket_ids.len()
        )));
    }
    if claim.player_ids.len() != claim.ticket_ids.len() {
        return Err(PoolError::InvalidClaim(format!(
            "{} tickets but {} players",
            claim.ticket_ids.len(),
            claim.player_ids.len()
        )));
    }
    // A match's few tickets are compared pairwise: a worker checks every
    // claim of its cycle, and a set per claim cost more than the compares.
    let ids = &claim.ticket_ids;
    let twice = if ids.len() <= 32 {
        ids.iter()
            .enumerate()
            .find(|(i, t)| ids[i + 1..].contains(t))
            .map(|(_, t)| t)
    } else {
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        ids.iter().find(|t| !seen.insert(t.as_str()))
    };
    match twice {
        Some(t) => Err(PoolError::InvalidClaim(format!("ticket {t} listed twice"))),
        None => Ok(()),
    }
}

/// What a mode holds, as [`super::Leases::renew_lease_and_probe`] sees it (counts
/// of entries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModeActivity {
    /// Live searches in the pool (proposed ones included).
    pub searches: u64,
    /// Match records in the outbox, recorded or not yet acknowledged.
    pub outbox: u64,
    /// Open proposals.
    pub proposals: u64,
    /// Open backfills.
    pub backfills: u64,
}

impl ModeActivity {
    /// Nothing to match, record, close or expire: the cycle has nothing to
    /// do beyond the renewal.
    pub fn is_idle(&self) -> bool {
        *self == Self::default()
    }
}
