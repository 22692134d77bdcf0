//! Every error and reason code matchplane answers with, as one vocabulary
//! (docs/error-codes.md lists them).
//!
//! The API maps each code to an HTTP status; the matching core and the
//! simulator only ever name them.

use serde::{Deserialize, Serialize};

/// Every machine-readable code matchplane answers with (docs/game-modes.md, docs/searching.md, docs/game-modes.md#why-a-player-is-still-waiting, docs/error-codes.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// A field is malformed or out of bounds.
    ValidationError,
    /// The name is already taken in the project.
    Conflict,
    /// Sum of `matchShape` above the tier's `maxMatchSize`.
    MatchSizeLimitExceeded,
    /// `matchmakingCycleDurationSeconds` below the tier's floor.
    CycleDurationBelowTierFloor,
    /// `baseTolerance` below the tier's floor.
    ToleranceBelowTierFloor,
    /// `expansionMultiplier` below the tier's floor.
    ExpansionBelowTierFloor,
    /// `parties.maxSize` cannot be seated by the shape.
    PartySizeExceedsShape,
    /// Webhook URL not https or not public.
    InvalidWebhookUrl,
    /// A project or search quota is used up.
    QuotaExceeded,
    /// The project holds its tier's `maxPendingTickets` tickets generated
    /// and not yet searching.
    TicketLimitExceeded,
    /// No such game mode in the project.
    GameModeNotFound,
    /// The mode is disabled (or was deleted).
    GameModeDisabled,
    /// An MMR mode and no `attributes.mmr`.
    MmrRequired,
    /// `mmr` outside `[minMmr, maxMmr]`.
    MmrOutOfRange,
    /// A party in a mode without parties.
    PartiesNotEnabled,
    /// More members than `parties.maxSize`.
    PartyTooLarge,
    /// A party whose members list is inconsistent.
    InvalidParty,
    /// The player already has a live search in this mode.
    PlayerAlreadySearching,
    /// The ticket already has a live search.
    SearchAlreadyActive,
    /// The ticket was matched and is spent.
    TicketAlreadyMatched,
    /// Unknown or expired ticket token.
    TicketInvalid,
    /// Ping modes need a WebSocket search.
    PingRequiresWebsocket,
    /// Waiting: not every party member searches yet.
    PartyIncomplete,
    /// Waiting: no ping measured yet (Ping modes).
    PingNotMeasured,
    /// Waiting: fewer seats wait than the shape needs.
    NotEnoughPlayers,
    /// Waiting: nobody close enough.
    NoCandidatesInRange,
    /// Waiting: keep-together cannot seat the parties in range.
    NoExactSeating,
    /// A mode with `regions` and a ticket without `attributes.latencies`.
    LatenciesRequired,
    /// Waiting: no region has every in-range partner within their ceilings.
    NoCommonRegion,
    /// Waiting: no seating of the players in range gives every team its
    /// role seats (docs/rules.md, "Role queues").
    NoRoleSeating,
    /// A backfill request is already open for this match (docs/backfill.md).
    BackfillAlreadyOpen,
    /// The roster leaves no seat open (docs/backfill.md).
    NoOpenSeats,
    /// A backfill roster with a team over its size, a player twice or an
    /// unknown team index (docs/backfill.md).
    InvalidRoster,
    /// The match's game mode has no enabled `backfill` block (docs/backfill.md).
    BackfillNotEnabled,
    /// Missing or invalid credentials.
    Unauthorized,
    /// No such resource (or another tenant's).
    NotFound,
    /// Too many requests.
    RateLimited,
    /// Body over 64 KiB.
    PayloadTooLarge,
    /// Body is not JSON.
    UnsupportedMediaType,
    /// A rating result with this `matchId` was already applied.
    ResultAlreadyReported,
    /// Something failed on our side; nothing internal is said.
    Internal,
    /// An API key outside its scopes (the needed scope is named): `403`.
    Forbidden,
    /// A write whose `If-Match` (or body `version`) is not the current version, or an `If-None-Match: *` create of something that exists: `412`.
    VersionMismatch,
    /// An `Idempotency-Key` sent again with another request (another body, route or credential): `422`.
    IdempotencyKeyReused,
    /// The first request of an `Idempotency-Key` is still running: `409` with `Retry-After`.
    IdempotencyKeyInUse,
    /// A dependency (PostgreSQL, Redis) is out of reach or did not answer in time: `503` with `Retry-After`; nothing about it is shown.
    ServiceUnavailable,
    /// The route does not take the request's method: `405`.
    MethodNotAllowed,
    /// The request's URI is over the limit: `414`.
    UriTooLong,
    /// The request's headers are over the limit: `431`.
    HeadersTooLarge,
    /// The request's body did not arrive in time (the client's slowness):
    /// `408`, without `Retry-After`.
    RequestTimeout,
    /// An answer after the proposal closed (or past its `acceptBy`), or one
    /// naming a proposal that is not the ticket's open one: `409`.
    ProposalClosed,
    /// An answer from a ticket in no proposal: `409`.
    NotProposed,
    /// The player declined or ignored a proposal of this mode and is cooled down: `409` with `retryAfterSeconds`.
    DeclineCooldown,
    /// A search ended `failed`: its player declined the proposal.
    MatchDeclined,
    /// A search ended `failed`: its player did not answer the proposal by `acceptBy`.
    AcceptanceTimeout,
    /// A search ended `failed`: another member of its party declined or did not answer.
    PartyMemberDeclined,
    /// A release of a match that is not made, or was made longer ago than the release window: `409`.
    ReleaseWindowClosed,
    /// A second assignment of a match: `409`.
    AlreadyAssigned,
    /// A guarded config change whose guarded figures worsened by more than the tolerance on the recording: `409` with `guard`.
    ConfigRegression,
    /// A guard or replay with no search recorded in its window: `422`.
    RecordingRequired,
    /// A search the pool store no longer has at all (lost with its data, e.g. a
    /// Redis restart without persistence) ended `expired` for this reason; a
    /// new ticket is needed.
    SearchLost,
    /// A WebSocket search that stopped answering Pings ended `expired` for this reason.
    PongTimeout,
    /// A ticket without a declared attribute that has no `default` (docs/rules.md): `422`; a live search failed for it after a config change.
    AttributeRequired,
    /// A live search whose attribute value the changed declarations no longer allow (docs/rules.md).
    AttributeNotAllowed,
    /// A party whose members sent different values of a `string` attribute, or share too few values for an `intersect` rule (docs/rules.md).
    PartyAttributesDiffer,
    /// Waiting: a rule over the studio's attributes turned away the candidates that would complete a match (docs/rules.md).
    RuleNotMet,
    /// Waiting: the mode's matching is held (docs/game-modes.md#holding-matching): its cycles
    /// form no match until the hold is cleared.
    MatchingHeld,
    /// A ticket or search for a player whose match waits for its assignment
    /// (docs/acceptance.md), under `playerSearchScope` `project`: `409` with `matchId`.
    PlayerInMatch,
}

impl Code {
    /// The code as written in JSON, e.g. `"PARTY_TOO_LARGE"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::ValidationError => "VALIDATION_ERROR",
            Code::Conflict => "CONFLICT",
            Code::MatchSizeLimitExceeded => "MATCH_SIZE_LIMIT_EXCEEDED",
            Code::CycleDurationBelowTierFloor => "CYCLE_DURATION_BELOW_TIER_FLOOR",
            Code::ToleranceBelowTierFloor => "TOLERANCE_BELOW_TIER_FLOOR",
            Code::ExpansionBelowTierFloor => "EXPANSION_BELOW_TIER_FLOOR",
            Code::PartySizeExceedsShape => "PARTY_SIZE_EXCEEDS_SHAPE",
            Code::InvalidWebhookUrl => "INVALID_WEBHOOK_URL",
            Code::QuotaExceeded => "QUOTA_EXCEEDED",
            Code::TicketLimitExceeded => "TICKET_LIMIT_EXCEEDED",
            Code::GameModeNotFound => "GAME_MODE_NOT_FOUND",
            Code::GameModeDisabled => "GAME_MODE_DISABLED",
            Code::MmrRequired => "MMR_REQUIRED",
            Code::MmrOutOfRange => "MMR_OUT_OF_RANGE",
            Code::PartiesNotEnabled => "PARTIES_NOT_ENABLED",
            Code::PartyTooLarge => "PARTY_TOO_LARGE",
            Code::InvalidParty => "INVALID_PARTY",
            Code::PlayerAlreadySearching => "PLAYER_ALREADY_SEARCHING",
            Code::SearchAlreadyActive => "SEARCH_ALREADY_ACTIVE",
            Code::TicketAlreadyMatched => "TICKET_ALREADY_MATCHED",
            Code::TicketInvalid => "TICKET_INVALID",
            Code::PingRequiresWebsocket => "PING_REQUIRES_WEBSOCKET",
            Code::PartyIncomplete => "PARTY_INCOMPLETE",
            Code::PingNotMeasured => "PING_NOT_MEASURED",
            Code::NotEnoughPlayers => "NOT_ENOUGH_PLAYERS",
            Code::NoCandidatesInRange => "NO_CANDIDATES_IN_RANGE",
            Code::NoExactSeating => "NO_EXACT_SEATING",
            Code::LatenciesRequired => "LATENCIES_REQUIRED",
            Code::NoCommonRegion => "NO_COMMON_REGION",
            Code::NoRoleSeating => "NO_ROLE_SEATING",
            Code::BackfillAlreadyOpen => "BACKFILL_ALREADY_OPEN",
            Code::NoOpenSeats => "NO_OPEN_SEATS",
            Code::InvalidRoster => "INVALID_ROSTER",
            Code::BackfillNotEnabled => "BACKFILL_NOT_ENABLED",
            Code::Unauthorized => "UNAUTHORIZED",
            Code::NotFound => "NOT_FOUND",
            Code::RateLimited => "RATE_LIMITED",
            Code::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Code::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            Code::ResultAlreadyReported => "RESULT_ALREADY_REPORTED",
            Code::Internal => "INTERNAL",
            Code::Forbidden => "FORBIDDEN",
            Code::VersionMismatch => "VERSION_MISMATCH",
            Code::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            Code::IdempotencyKeyInUse => "IDEMPOTENCY_KEY_IN_USE",
            Code::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            Code::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Code::UriTooLong => "URI_TOO_LONG",
            Code::HeadersTooLarge => "HEADERS_TOO_LARGE",
            Code::RequestTimeout => "REQUEST_TIMEOUT",
            Code::ProposalClosed => "PROPOSAL_CLOSED",
            Code::NotProposed => "NOT_PROPOSED",
            Code::DeclineCooldown => "DECLINE_COOLDOWN",
            Code::MatchDeclined => "MATCH_DECLINED",
            Code::AcceptanceTimeout => "ACCEPTANCE_TIMEOUT",
            Code::PartyMemberDeclined => "PARTY_MEMBER_DECLINED",
            Code::ReleaseWindowClosed => "RELEASE_WINDOW_CLOSED",
            Code::AlreadyAssigned => "ALREADY_ASSIGNED",
            Code::ConfigRegression => "CONFIG_REGRESSION",
            Code::RecordingRequired => "RECORDING_REQUIRED",
            Code::SearchLost => "SEARCH_LOST",
            Code::PongTimeout => "PONG_TIMEOUT",
            Code::AttributeRequired => "ATTRIBUTE_REQUIRED",
            Code::AttributeNotAllowed => "ATTRIBUTE_NOT_ALLOWED",
            Code::PartyAttributesDiffer => "PARTY_ATTRIBUTES_DIFFER",
            Code::RuleNotMet => "RULE_NOT_MET",
            Code::MatchingHeld => "MATCHING_HELD",
            Code::PlayerInMatch => "PLAYER_IN_MATCH",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
