//! Authenticating a ticket token and starting a search with it, shared by
//! the WebSocket and the REST search (SPEC 4).

use super::{token, unix_now, Play};
use crate::problem::ApiError;
use matchplane_matchmaker::{Algorithm, Code, GameModeConfig, Search};
use matchplane_store::pool::{AddSearchError, ModeKey, PoolError};
use matchplane_store::tickets::Ticket;
use sea_orm::DatabaseConnection;
use std::sync::Arc;

/// How a search is held: a socket, or a client that polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `GET /v1/search` (WebSocket): lives until the socket closes.
    WebSocket,
    /// `POST /v1/searches`: lives while polled.
    Rest,
}

/// A search just added to its pool.
#[derive(Debug, Clone)]
pub struct Started {
    /// Its ticket.
    pub ticket: Ticket,
    /// The pool it waits in.
    pub mode: ModeKey,
    /// When it started (Unix seconds).
    pub queued_at: f64,
}

/// `401 TICKET_INVALID`, the same for every kind of bad token.
pub fn ticket_invalid() -> ApiError {
    ApiError::new(Code::TicketInvalid, "the ticket is unknown or has expired")
}

/// A store failure as `500` (logged, never shown).
pub fn store_failed(err: PoolError) -> ApiError {
    ApiError::internal(&err)
}

/// The ticket `token` speaks for, whatever its expiry; `401 TICKET_INVALID`
/// for an unknown or malformed token.
///
/// # Errors
/// As above, or `500` when the store fails.
pub async fn ticket_of(play: &Play, token: &str) -> Result<Ticket, ApiError> {
    let parsed = token::parse(token).ok_or_else(ticket_invalid)?;
    let ticket = match play.recent.get(&parsed.project_id, &parsed.ticket_id) {
        Some(ticket) => ticket,
        None => play
            .tickets
            .get(&parsed.project_id, &parsed.ticket_id)
            .await
            .map_err(store_failed)?
            .ok_or_else(ticket_invalid)?,
    };
    if !token::matches(token, &ticket.token_hash) {
        return Err(ticket_invalid());
    }
    Ok(ticket)
}

/// The ticket `token` speaks for, if it has not expired at `now`.
///
/// # Errors
/// `401 TICKET_INVALID`, or `500` when the store fails.
pub async fn live_ticket_of(play: &Play, token: &str, now: f64) -> Result<Ticket, ApiError> {
    let ticket = ticket_of(play, token).await?;
    if ticket.expires_at <= now {
        return Err(ticket_invalid());
    }
    Ok(ticket)
}

/// The config of a ticket's mode, if it still exists and is enabled.
///
/// # Errors
/// `409 GAME_MODE_DISABLED` when the mode was disabled or deleted.
pub async fn mode_of(
    play: &Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
) -> Result<Arc<GameModeConfig>, ApiError> {
    match play
        .cache
        .mode(db, &ticket.project_id, &ticket.game_mode)
        .await?
    {
        Some(config) if config.enabled => Ok(config),
        _ => Err(ApiError::new(
            Code::GameModeDisabled,
            format!("game mode {} is disabled or deleted", ticket.game_mode),
        )),
    }
}

/// The REST poll deadline (or the ticket's expiry, if sooner).
pub fn rest_deadline(play: &Play, ticket: &Ticket, now: f64) -> f64 {
    (now + play.settings.rest_poll_timeout.as_secs_f64()).min(ticket.expires_at)
}

/// Starts a search with `ticket` (already authenticated).
///
/// # Errors
/// `PING_REQUIRES_WEBSOCKET` (422, REST in a Ping mode),
/// `SEARCH_ALREADY_ACTIVE`, `PLAYER_ALREADY_SEARCHING` (with the live
/// `ticketId`), `TICKET_ALREADY_MATCHED` (409), `QUOTA_EXCEEDED` (429),
/// `GAME_MODE_DISABLED` (409).
pub async fn start(
    play: &Play,
    db: &DatabaseConnection,
    ticket: Ticket,
    via: Via,
) -> Result<Started, ApiError> {
    let config = mode_of(play, db, &ticket).await?;
    if via == Via::Rest && matches!(config.algorithm, Algorithm::Ping { .. }) {
        return Err(ApiError::new(
            Code::PingRequiresWebsocket,
            "this game mode matches on ping, which is measured live: search over the WebSocket",
        ));
    }
    let max_live = play.cache.max_live(db, &ticket.project_id).await?;
    let now = unix_now();
    let deadline = match via {
        Via::WebSocket => ticket.expires_at,
        Via::Rest => rest_deadline(play, &ticket, now),
    };
    let mode = ModeKey::new(&ticket.project_id, &ticket.game_mode);
    let search = Search {
        ticket_id: ticket.ticket_id.as_str().into(),
        player_id: ticket.player_id.as_str().into(),
        party: ticket.party.clone(),
        mmr: ticket.mmr,
        ping_ms: None,
        queued_at: now,
    };
    play.pool
        .add_search(&mode, &search, deadline, Some(max_live))
        .await
        .map_err(add_error)?;
    play.saw(&mode);
    Ok(Started {
        ticket,
        mode,
        queued_at: now,
    })
}

fn add_error(err: AddSearchError) -> ApiError {
    match err {
        AddSearchError::SearchAlreadyActive => ApiError::new(
            Code::SearchAlreadyActive,
            "this ticket already has a live search",
        ),
        AddSearchError::PlayerAlreadySearching { ticket_id } => player_already_searching(ticket_id),
        AddSearchError::TicketAlreadyMatched => ApiError::new(
            Code::TicketAlreadyMatched,
            "this ticket was matched already: generate a new one",
        ),
        AddSearchError::QuotaExceeded { limit } => ApiError::new(
            Code::QuotaExceeded,
            format!("the project has reached its tier's {limit} concurrent searches"),
        ),
        AddSearchError::Store(err) => store_failed(err),
    }
}

/// `409 PLAYER_ALREADY_SEARCHING` naming the live ticket.
pub fn player_already_searching(ticket_id: String) -> ApiError {
    ApiError::new(
        Code::PlayerAlreadySearching,
        format!("the player is already searching in this game mode with ticket {ticket_id}"),
    )
    .with_ticket_id(ticket_id)
}
