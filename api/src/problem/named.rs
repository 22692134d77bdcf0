//! The named problems: one constructor per documented code that handlers
//! answer with (docs/error-codes.md), each with its status, detail and
//! extra members.

use super::{ApiError, Extra, UNAVAILABLE_RETRY_AFTER_SECONDS};
use axum::http::StatusCode;
use matchplane_matchmaker::Code;

impl ApiError {
    /// `401 UNAUTHORIZED`.
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(Code::Unauthorized, detail)
    }

    /// `404 NOT_FOUND`: also what another tenant's resource answers.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(Code::NotFound, detail)
    }

    /// `404 GAME_MODE_NOT_FOUND`: the project has no game mode `name`. Every
    /// route that names a mode (a ticket's `gameMode`, a path's `{name}`)
    /// answers this one.
    /// A name that cannot be a mode's (longer than 63 characters, or not
    /// of the name pattern) is not echoed whole: a caller's 10 000
    /// characters would come back in the answer.
    pub fn game_mode_not_found(name: &str) -> Self {
        let detail = if matchplane_matchmaker::validation::is_valid_name(name) {
            format!("the project has no game mode named {name:?}")
        } else {
            let shown: String = name.chars().take(32).collect();
            let more = if name.chars().nth(32).is_some() {
                "…"
            } else {
                ""
            };
            format!(
                "the project has no game mode named {shown:?}{more}: no game mode can \
                 have this name (names are 1 to 63 lowercase letters, digits, `_` and \
                 `-`, starting with a letter or digit)"
            )
        };
        Self::new(Code::GameModeNotFound, detail)
    }

    /// `429 RATE_LIMITED` with `Retry-After` (whole seconds, at least 1).
    pub fn rate_limited(retry_after_seconds: u64) -> Self {
        Self::rate_limited_for(
            "the project's request rate limit is exhausted; retry later",
            retry_after_seconds,
        )
    }

    /// `429 RATE_LIMITED` with `Retry-After` (whole seconds, at least 1)
    /// for a limit other than the request rate, which `detail` names.
    pub fn rate_limited_for(detail: impl Into<String>, retry_after_seconds: u64) -> Self {
        let mut err = Self::new(Code::RateLimited, detail);
        err.retry_after_seconds = Some(retry_after_seconds.max(1));
        err
    }

    /// `409 DECLINE_COOLDOWN`: the player declined, stayed silent in
    /// (`ACCEPTANCE_TIMEOUT`) or left (cancelled, closed the socket) a
    /// proposal of this mode and may search again in `retry_after_seconds`
    /// (at least 1). The detail names every case, as a cooldown does not
    /// record which one it was (docs/acceptance.md, docs/error-codes.md).
    pub fn decline_cooldown(retry_after_seconds: u64) -> Self {
        let mut err = Self::with_status(
            StatusCode::CONFLICT,
            Code::DeclineCooldown.as_str(),
            format!(
                "the player did not accept a proposed match of this mode (declined, \
                 stayed silent or left) and may search again in {retry_after_seconds} s"
            ),
        );
        err.retry_after_seconds = Some(retry_after_seconds.max(1));
        err
    }

    /// `401 TICKET_INVALID` for a token that is not a ticket's: malformed,
    /// or with a secret that is not the ticket's (forged or altered).
    pub fn ticket_invalid() -> Self {
        Self::new(
            Code::TicketInvalid,
            "the ticket token is not valid: use the token exactly as the ticket was \
             created with, or create a new ticket",
        )
    }

    /// `401 TICKET_INVALID` for the right token of a ticket that has
    /// expired.
    pub fn ticket_expired() -> Self {
        Self::new(
            Code::TicketInvalid,
            "the ticket has expired: create a new ticket",
        )
    }

    /// `401 TICKET_INVALID` for a well-formed token whose ticket the store
    /// does not hold: never created, expired, cancelled by the studio
    /// before it searched, or lost with the matchmaking store's data
    /// (nothing tells these apart once the record is gone).
    pub fn ticket_unknown() -> Self {
        Self::new(
            Code::TicketInvalid,
            "the ticket token is not valid: no such ticket, it has expired, or the studio \
             cancelled it before it searched; a ticket that was none of these was lost with \
             the matchmaking store's data (its search too): create a new ticket",
        )
    }

    /// `401 TICKET_INVALID` for the right token of a ticket whose match
    /// was released, when the matchmaking store no longer holds the
    /// ticket's record (it lost its data, or `matchplane dev` restarted).
    pub fn ticket_lost_after_release() -> Self {
        Self::new(
            Code::TicketInvalid,
            "the ticket's match was released, but the ticket was lost with the matchmaking \
             store's data (a restart of `matchplane dev`, or Redis lost its data), so it cannot \
             search again: create a new ticket",
        )
    }

    /// `409 PLAYER_ALREADY_SEARCHING` naming the live ticket (`ticketId`).
    pub fn player_already_searching(ticket_id: String, game_mode: String) -> Self {
        Self::new(
            Code::PlayerAlreadySearching,
            format!(
                "the player is already searching in game mode {game_mode} with ticket {ticket_id}"
            ),
        )
        .with_ticket_id(ticket_id)
        .with_game_mode(game_mode)
    }

    /// `409 PLAYER_IN_MATCH` naming the match (`matchId`) that waits for
    /// its assignment, its mode (`gameMode`) and the seated ticket
    /// (`ticketId`).
    pub fn player_in_match(match_id: String, ticket_id: String, game_mode: String) -> Self {
        let mut err = Self::new(
            Code::PlayerInMatch,
            format!(
                "the player is in match {match_id} of game mode {game_mode}, which waits for its assignment"
            ),
        )
        .with_ticket_id(ticket_id);
        err.extra = Some(Box::new(Extra {
            backfill_id: None,
            guard: None,
            game_mode: Some(game_mode),
            match_id: Some(match_id),
        }));
        err
    }

    /// `403 FORBIDDEN`: the key lacks `needed`.
    pub fn forbidden(needed: crate::scopes::Scope) -> Self {
        Self::with_status(
            StatusCode::FORBIDDEN,
            Code::Forbidden.as_str(),
            format!("this API key lacks the `{needed}` scope this request needs"),
        )
    }

    /// `412 VERSION_MISMATCH`.
    pub fn version_mismatch(detail: impl Into<String>) -> Self {
        Self::with_status(
            StatusCode::PRECONDITION_FAILED,
            Code::VersionMismatch.as_str(),
            detail,
        )
    }

    /// `422 IDEMPOTENCY_KEY_REUSED`.
    pub fn idempotency_key_reused(detail: impl Into<String>) -> Self {
        Self::with_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            Code::IdempotencyKeyReused.as_str(),
            detail,
        )
    }

    /// `409 IDEMPOTENCY_KEY_IN_USE` with `Retry-After: 1`.
    pub fn idempotency_key_in_use() -> Self {
        let mut err = Self::with_status(
            StatusCode::CONFLICT,
            Code::IdempotencyKeyInUse.as_str(),
            "the first request with this Idempotency-Key is still running; retry shortly",
        );
        err.retry_after_seconds = Some(1);
        err
    }

    /// `503 SERVICE_UNAVAILABLE` with `Retry-After`: a dependency is out of
    /// reach; `detail` names which, never how (no address, no driver text).
    pub fn unavailable(detail: impl Into<String>) -> Self {
        let mut err = Self::with_status(
            StatusCode::SERVICE_UNAVAILABLE,
            Code::ServiceUnavailable.as_str(),
            detail,
        );
        err.retry_after_seconds = Some(UNAVAILABLE_RETRY_AFTER_SECONDS);
        err
    }

    /// `408 REQUEST_TIMEOUT`: the request's body did not arrive in time
    /// (the client's slowness, not the server's: no `Retry-After`).
    pub fn request_timeout() -> Self {
        Self::new(
            Code::RequestTimeout,
            "the request body did not arrive in time; send it whole, without pauses",
        )
    }

    /// `413 PAYLOAD_TOO_LARGE`: the body is (or is declared) over the
    /// route's `limit` in bytes.
    pub fn payload_too_large(limit: u64) -> Self {
        Self::new(
            Code::PayloadTooLarge,
            format!("the body is over {limit} bytes"),
        )
    }

    /// `400 VALIDATION_ERROR` naming a header that must be sent at most
    /// once and came `times` times.
    pub fn header_repeated(name: &str, times: usize) -> Self {
        Self::bad_request(
            name,
            format!("the {name} header must be sent once, not {times} times"),
        )
    }

    /// `500 INTERNAL`; `cause` is logged here and never sent.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "request failed on our side");
        Self::new(Code::Internal, "something failed on our side")
    }
}
