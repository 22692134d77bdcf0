//! Why a candidate is still waiting (docs/game-modes.md#why-a-player-is-still-waiting).

use serde::{Deserialize, Serialize};

/// The cycle's answer to "why has nobody been found yet?" for one search,
/// served as its `waitingReason`. Serialised as `{"code": "...", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 1, "seatsNeeded": 2})))]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WaitingReason {
    /// Some party members have no live search in this mode yet.
    PartyIncomplete {
        /// Player ids of the members not searching.
        missing: Vec<String>,
    },
    /// A Ping mode and at least one member has no `pingMs` yet.
    PingNotMeasured,
    /// Fewer seats wait (in complete, eligible parties) than one match needs.
    #[serde(rename_all = "camelCase")]
    NotEnoughPlayers {
        /// Seats of every candidate still unmatched when this one was tried.
        seats_waiting: u32,
        /// Seats of one match (sum of the shape).
        seats_needed: u32,
    },
    /// Nobody close enough: too few seats fit this candidate, or those that
    /// do fit it do not fit each other.
    #[serde(rename_all = "camelCase")]
    NoCandidatesInRange {
        /// Distance (MMR points or milliseconds) to the nearest other
        /// unmatched candidate not yet in range of this one both ways (a
        /// partner already in range is not what a short team waits for);
        /// `null` when there is none.
        nearest_distance: Option<f64>,
        /// This candidate's current range (MMR points or milliseconds).
        range: f64,
        /// Unblock hint: seconds until this candidate's range and that
        /// nearest candidate's range both cover their distance if nobody
        /// else arrives; `null` when that never happens (nobody out of
        /// range, a flat Ping range, a range that stops widening at
        /// `maxTolerance` or never widens).
        #[serde(default, serialize_with = "crate::timestamp::optional_seconds")]
        unblocks_in_seconds: Option<f64>,
    },
    /// Enough seats in range, but keep-together cannot seat the party sizes
    /// exactly in the teams (e.g. three duos for a 3v3).
    #[serde(rename_all = "camelCase")]
    NoExactSeating {
        /// Unblock hint: party sizes (largest first, one per team with
        /// open seats) that, joining the group the cycle built around this
        /// search, would complete an exact seating; smaller parties adding
        /// up to one of them do too. Empty when unknown.
        #[serde(default)]
        completing_party_sizes: Vec<u32>,
    },
    /// A mode with `regions` (docs/regions.md): enough in range, but no region
    /// has every one of them within their own ceiling.
    #[serde(rename_all = "camelCase")]
    NoCommonRegion {
        /// The region with the lowest worst latency among this candidate
        /// and its in-range partners; `null` when none reaches any.
        best_region: Option<String>,
        /// That worst latency (milliseconds).
        worst_latency_ms: Option<f64>,
        /// This candidate's current ceiling (milliseconds).
        ceiling_ms: f64,
        /// Unblock hint: seconds until this candidate's own ceiling (its
        /// `expansion` steps) reaches `worstLatencyMs`, the ceiling that
        /// would let the group play in `bestRegion`; 0 when it already
        /// does (a partner's ceiling is what is short); `null` when no
        /// step ever reaches it.
        #[serde(default, serialize_with = "crate::timestamp::optional_seconds")]
        unblocks_in_seconds: Option<f64>,
    },
    /// A rule over the studio's attributes (docs/rules.md) turned away
    /// candidates that were in range: the rule that turned away the most.
    #[serde(rename_all = "camelCase")]
    RuleNotMet {
        /// The rule's `name`.
        rule: String,
        /// A `distance` rule's nearest miss: the smallest difference to a
        /// candidate it turned away.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        distance: Option<f64>,
        /// That pair's smaller current `max`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
        /// An `intersect` rule's nearest miss: the most values shared with
        /// a candidate it turned away.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overlap: Option<u32>,
        /// That pair's larger current `minOverlap`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_overlap: Option<u32>,
        /// Seconds until the rule allows the nearest miss by both sides'
        /// `relax` steps, this candidate's and the candidate it missed
        /// (the rule is mutual): 0 when both allow it already (another
        /// member of the group kept it out), `null` when either side's
        /// steps never will.
        #[serde(default, serialize_with = "crate::timestamp::optional_seconds")]
        unblocks_in_seconds: Option<f64>,
    },
    /// Role queues (docs/rules.md, "Role queues"): enough players in range,
    /// but no seating of them gives every team its role seats.
    NoRoleSeating {
        /// The seats the group built with this search left empty, by role
        /// (`any` for a seat of any role), e.g. `{"tank": 1}`.
        short: std::collections::BTreeMap<String, u32>,
    },
    /// The mode's matching is held (docs/game-modes.md#holding-matching): its cycles form
    /// no match until the hold is cleared; the search keeps its place and
    /// its wait (and range) keep growing.
    MatchingHeld,
}

impl WaitingReason {
    /// The documented code of the reason, e.g. `NO_CANDIDATES_IN_RANGE`.
    pub fn code(&self) -> crate::Code {
        match self {
            WaitingReason::PartyIncomplete { .. } => crate::Code::PartyIncomplete,
            WaitingReason::PingNotMeasured => crate::Code::PingNotMeasured,
            WaitingReason::NotEnoughPlayers { .. } => crate::Code::NotEnoughPlayers,
            WaitingReason::NoCandidatesInRange { .. } => crate::Code::NoCandidatesInRange,
            WaitingReason::NoExactSeating { .. } => crate::Code::NoExactSeating,
            WaitingReason::NoCommonRegion { .. } => crate::Code::NoCommonRegion,
            WaitingReason::RuleNotMet { .. } => crate::Code::RuleNotMet,
            WaitingReason::NoRoleSeating { .. } => crate::Code::NoRoleSeating,
            WaitingReason::MatchingHeld => crate::Code::MatchingHeld,
        }
    }
}

/// The `waitingReason` a searching client and the studio read: the last
/// cycle's [`WaitingReason`], or [`MatchPending`] while a match that claimed
/// the search is being stored (docs/error-codes.md, "Waiting reasons").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum SearchWaitingReason {
    /// The last cycle's reason.
    Cycle(WaitingReason),
    /// `{"code": "MATCH_PENDING"}`.
    Pending(MatchPending),
}

/// `{"code": "MATCH_PENDING"}`: the search was claimed into a match that
/// is being stored; it does not expire meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MatchPending {
    /// The only value.
    MatchPending,
}

/// A waiting search's status as stored and served (docs/searching.md#statuses): its reason,
/// with `found` and `needed` beside `code`, e.g.
/// `{"code": "NO_CANDIDATES_IN_RANGE", "nearestDistance": 40, "range": 150, "found": 3, "needed": 10}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitingStatus {
    /// Why nobody was found this cycle.
    #[serde(flatten)]
    pub reason: WaitingReason,
    /// Seats of the largest in-range group the cycle built around or with
    /// the search (players).
    pub found: u32,
    /// Seats of the smallest match its wait allows now (players).
    pub needed: u32,
}
