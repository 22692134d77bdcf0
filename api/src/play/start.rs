//! Authenticating a ticket token and starting a search with it, shared by
//! the WebSocket and the REST search (docs/searching.md).

use super::cache::Quotas;
use super::token::{self, TokenRef};
use super::{unix_now, Play};
use crate::problem::ApiError;
use matchplane_matchmaker::{Algorithm, Code, GameModeConfig};
use matchplane_store::pool::{AddSearchError, ModeKey, PlayerSearchScope};
use matchplane_store::tickets::{Hold, StartSearchError, Ticket, TicketStart};
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
    /// When it started (Unix seconds), by the start's clock. A ticket
    /// whose match was released resumes its first search's `queuedAt` in
    /// the pool instead; a reader that shows it takes it from there.
    pub queued_at: f64,
}

/// The ticket `token` speaks for, whatever its expiry, read from the ticket
/// store or, once it lost the record, from the stored match that seated it
/// (the token checked against the kept hash either way); `401
/// TICKET_INVALID` for an unknown, malformed or forged token.
///
/// # Errors
/// As above, or `500` when the store fails.
pub async fn ticket_of(
    play: &Play,
    db: &DatabaseConnection,
    token: &str,
) -> Result<Ticket, ApiError> {
    let parsed = token::parse(token).ok_or_else(ApiError::ticket_invalid)?;
    let ticket = super::matched::ticket_or_matched(play, db, &parsed.project_id, &parsed.ticket_id)
        .await?
        .ok_or_else(ApiError::ticket_unknown)?;
    authentic(token, ticket)
}

/// The ticket `parsed` (the parts of `token`) names, read from the store
/// and checked against the token. One the store lost but a stored match
/// seats is refused as matched (`409 TICKET_ALREADY_MATCHED`, as it was
/// before the loss): it never searches again.
async fn ticket_named(
    play: &Play,
    db: &DatabaseConnection,
    token: &str,
    parsed: &TokenRef,
) -> Result<Ticket, ApiError> {
    match play
        .tickets
        .get(&parsed.project_id, &parsed.ticket_id)
        .await?
    {
        Some(ticket) => authentic(token, ticket),
        // Cold path, boxed: a database look-up inline would make every
        // start's future several KiB (see the size test in routes/tickets.rs).
        None => Err(Box::pin(lost(db, token, parsed)).await?),
    }
}

/// Why a start with `token` fails when the ticket store has no record of
/// its ticket: `409 TICKET_ALREADY_MATCHED` when a stored match seats the
/// ticket and the token is its (checked against the kept hash), unless
/// that match was released or unassigned since: its players may search
/// again (docs/acceptance.md, "Releasing a match"), but this one's record
/// is gone, so `401 TICKET_INVALID` says so; `401 TICKET_INVALID` saying
/// the token is not valid when the stored match's hash is not the token's
/// (a forged secret), else saying the ticket is unknown, expired or lost
/// with the store's data.
///
/// # Errors
/// A database failure.
async fn lost(
    db: &DatabaseConnection,
    token: &str,
    parsed: &TokenRef,
) -> Result<ApiError, ApiError> {
    let row =
        matchplane_store::repos::match_tickets::get(db, &parsed.project_id, &parsed.ticket_id)
            .await?;
    Ok(match row {
        Some(row) if token::matches(token, &row.token_hash) => {
            use matchplane_store::repos::{match_status, matches};
            let stored = matches::get(db, &parsed.project_id, &row.match_id).await;
            match stored {
                Ok(m)
                    if m.status == match_status::RELEASED
                        || m.status == match_status::UNASSIGNED =>
                {
                    ApiError::ticket_lost_after_release()
                }
                Ok(_) | Err(matchplane_store::repos::StoreError::NotFound) => {
                    ApiError::from(AddSearchError::TicketAlreadyMatched)
                }
                Err(other) => return Err(other.into()),
            }
        }
        Some(_) => ApiError::ticket_invalid(),
        None => ApiError::ticket_unknown(),
    })
}

/// Why the one-script start refused `token` (its checks answer one error
/// for every cause): the ticket read again, on this cold path, says
/// whether the secret is not the ticket's or the ticket expired; one the
/// store no longer holds is [`lost`].
///
/// # Errors
/// A store failure.
async fn refused(
    play: &Play,
    db: &DatabaseConnection,
    token: &str,
    parsed: &TokenRef,
) -> Result<ApiError, ApiError> {
    let held = play
        .tickets
        .get(&parsed.project_id, &parsed.ticket_id)
        .await?;
    let Some(ticket) = held else {
        return Box::pin(lost(db, token, parsed)).await;
    };
    Ok(
        match authentic(token, ticket).and_then(|t| live(t, unix_now())) {
            Err(err) => err,
            // The right secret and unexpired when read again, yet refused
            // by the script (the hash covers the token's project and mode,
            // so this is a race with the record's change): the neutral
            // answer.
            Ok(_) => ApiError::ticket_unknown(),
        },
    )
}

/// `ticket` if `token` is its token; `401 TICKET_INVALID` otherwise.
fn authentic(token: &str, ticket: Ticket) -> Result<Ticket, ApiError> {
    if !token::matches(token, &ticket.token_hash) {
        return Err(ApiError::ticket_invalid());
    }
    Ok(ticket)
}

/// `ticket` if it has not expired at `now`; `401 TICKET_INVALID` saying it
/// expired otherwise.
fn live(ticket: Ticket, now: f64) -> Result<Ticket, ApiError> {
    if ticket.expires_at <= now {
        return Err(ApiError::ticket_expired());
    }
    Ok(ticket)
}

/// The config of `mode`, if it still exists and is enabled.
///
/// # Errors
/// `409 GAME_MODE_DISABLED` when the mode was disabled or deleted.
async fn enabled_mode(
    play: &Play,
    db: &DatabaseConnection,
    mode: &ModeKey,
) -> Result<Arc<GameModeConfig>, ApiError> {
    match play.cache.mode(db, &mode.project_id, &mode.mode).await? {
        Some(config) if config.enabled => Ok(config),
        _ => Err(ApiError::new(
            Code::GameModeDisabled,
            format!("game mode {} is disabled or deleted", mode.mode),
        )),
    }
}

/// What a start checks before the pool's rules: the mode is enabled, a
/// Ping mode is searched over the WebSocket; answers the mode's config
/// (the ticket is checked against it, see [`TicketStart::config`]) and the
/// project's quota and `playerSearchScope`.
///
/// # Errors
/// `GAME_MODE_DISABLED` (409), `PING_REQUIRES_WEBSOCKET` (422).
async fn admit(
    play: &Play,
    db: &DatabaseConnection,
    mode: &ModeKey,
    via: Via,
) -> Result<(Arc<GameModeConfig>, Quotas), ApiError> {
    let config = enabled_mode(play, db, mode).await?;
    if via == Via::Rest && matches!(config.algorithm, Algorithm::Ping { .. }) {
        return Err(ApiError::new(
            Code::PingRequiresWebsocket,
            "this game mode matches on ping, which is measured live: search over the WebSocket",
        ));
    }
    let quotas = play.cache.quotas(db, &mode.project_id).await?;
    Ok((config, quotas))
}

/// Whether a start in this mode checks the player's decline cooldown (a
/// mode with acceptance and a cooldown): such a start reads the ticket
/// first, to know its player.
async fn cools_down(play: &Play, db: &DatabaseConnection, mode: &ModeKey) -> bool {
    matches!(
        play.cache.mode(db, &mode.project_id, &mode.mode).await,
        Ok(Some(config)) if config
            .acceptance
            .as_ref()
            .is_some_and(|a| a.decline_cooldown_seconds > 0.0)
    )
}

/// How a search `via` is held, with this process's REST poll timeout.
fn hold(play: &Play, via: Via) -> Hold {
    match via {
        Via::WebSocket => Hold::Socket {
            lease_seconds: play.settings.socket_lease().as_secs_f64(),
        },
        Via::Rest => Hold::Polled {
            poll_seconds: play.settings.rest_poll_timeout.as_secs_f64(),
        },
    }
}

/// The REST poll deadline (or the ticket's expiry, if sooner).
pub fn rest_deadline(play: &Play, ticket: &Ticket, now: f64) -> f64 {
    hold(play, Via::Rest).deadline(now, ticket.expires_at)
}

/// Authenticates `token` and starts a search with its ticket (docs/searching.md), in
/// at most one Redis round trip:
///
/// - a token whose mode's config this process has seen (every mode it
///   generated a ticket in, among others): the mode
///   and quota checks from the cache, then one script that reads the ticket,
///   checks the token's hash, mode and expiry, and adds the search;
/// - otherwise (a mode not seen here yet, a start refused before the
///   script): the ticket is read and checked
///   first, so a bad token always gets `401`, then added (two round trips).
///
/// # Errors
/// `401 TICKET_INVALID`, and [`start`]'s.
pub async fn start_with_token(
    play: &Play,
    db: &DatabaseConnection,
    token: &str,
    via: Via,
) -> Result<Started, ApiError> {
    let parsed = token::parse(token).ok_or_else(ApiError::ticket_invalid)?;
    let name = &parsed.game_mode;
    if !play.cache.knows_mode(&parsed.project_id, name).await {
        let ticket = live(ticket_named(play, db, token, &parsed).await?, unix_now())?;
        return start(play, db, ticket, via).await;
    }
    let mode = ModeKey::new(&parsed.project_id, name);
    if Box::pin(cools_down(play, db, &mode)).await {
        let ticket = live(ticket_named(play, db, token, &parsed).await?, unix_now())?;
        return Box::pin(start(play, db, ticket, via)).await;
    }
    let (config, quotas) = match admit(play, db, &mode, via).await {
        Ok(admitted) => admitted,
        // Refused before the token was checked: a bad token still gets 401.
        Err(err) => {
            live(ticket_named(play, db, token, &parsed).await?, unix_now())?;
            return Err(err);
        }
    };
    if quotas.scope == PlayerSearchScope::Project {
        // The player's matches are checked first: the ticket is read.
        let ticket = live(ticket_named(play, db, token, &parsed).await?, unix_now())?;
        return Box::pin(start(play, db, ticket, via)).await;
    }
    let token_hash = token::hash(token);
    let ticket_id = &parsed.ticket_id;
    match from_store(
        play,
        db,
        mode,
        ticket_id,
        &token_hash,
        via,
        (&config, quotas),
    )
    .await
    {
        Err(StartSearchError::TicketInvalid) => {
            Err(Box::pin(refused(play, db, token, &parsed)).await?)
        }
        started => Ok(started?),
    }
}

/// Starts a search with `ticket` (already authenticated): the pool's add
/// script.
///
/// # Errors
/// `PING_REQUIRES_WEBSOCKET` (422, REST in a Ping mode),
/// `SEARCH_ALREADY_ACTIVE`, `PLAYER_ALREADY_SEARCHING` (with the live
/// `ticketId` and its `gameMode`, in any mode of the project under the
/// `project` scope), `PLAYER_IN_MATCH` (409 with `matchId`, under the
/// `project` scope while the player's match waits for its assignment),
/// `TICKET_ALREADY_MATCHED` (409), `QUOTA_EXCEEDED` (429),
/// `GAME_MODE_DISABLED` (409).
pub async fn start(
    play: &Play,
    db: &DatabaseConnection,
    ticket: Ticket,
    via: Via,
) -> Result<Started, ApiError> {
    let mode = ModeKey::new(&ticket.project_id, &ticket.game_mode);
    let (config, quotas) = admit(play, db, &mode, via).await?;
    if Box::pin(cools_down(play, db, &mode)).await {
        Box::pin(super::answers::check_cooldown(
            play,
            &mode,
            &ticket.player_id,
        ))
        .await?;
    }
    if quotas.scope == PlayerSearchScope::Project {
        Box::pin(super::player_scope::refuse_if_in_match(
            play,
            db,
            &ticket.project_id,
            &ticket.player_id,
            Some(&ticket.ticket_id),
        ))
        .await?;
    }
    // The same start as the fast path's: the search is marked as its
    // socket's when a socket holds it, and the ticket leaves the project's
    // pending tickets.
    match from_store(
        play,
        db,
        mode,
        &ticket.ticket_id,
        &ticket.token_hash,
        via,
        (&config, quotas),
    )
    .await
    {
        // Expired since it was read.
        Err(StartSearchError::TicketInvalid) => Err(ApiError::ticket_invalid()),
        started => Ok(started?),
    }
}

/// Starts the search of ticket `ticket_id` in `mode` through the ticket
/// store (which checks `token_hash` against the ticket's, and the ticket
/// against the mode's `config`), held `via`, under the project's
/// `quotas`, and records the start.
///
/// # Errors
/// The store's refusal.
async fn from_store(
    play: &Play,
    db: &DatabaseConnection,
    mode: ModeKey,
    ticket_id: &str,
    token_hash: &str,
    via: Via,
    (config, quotas): (&GameModeConfig, Quotas),
) -> Result<Started, StartSearchError> {
    let now = unix_now();
    let start = TicketStart {
        mode: &mode,
        ticket_id,
        token_hash,
        now,
        hold: hold(play, via),
        max_live: Some(quotas.max_live),
        scope: quotas.scope,
        config: Some(config),
    };
    let first = play.tickets.start_search(&start).await;
    // The token was checked before the add refused it. The first answer is
    // dropped and the second start boxed before waiting on it: the start's
    // future (every search start's) stays as small as without them.
    let ticket = if matches!(
        first,
        Err(StartSearchError::Add(AddSearchError::SearchAlreadyActive))
    ) {
        drop(first);
        Box::pin(super::unheld::start_over_unheld(play, &start)).await?
    } else if matches!(
        first,
        Err(StartSearchError::Add(AddSearchError::TicketAlreadyMatched))
    ) {
        // Its match may have been released with its tickets not freed yet.
        drop(first);
        Box::pin(super::unfreed::start_freed(play, db, &start)).await?
    } else {
        first?
    };
    let started = Started {
        ticket,
        mode,
        queued_at: now,
    };
    crate::recording::started(play, &started).await;
    Ok(started)
}

/// Takes `started`'s `queuedAt` from the pool: a start of a ticket whose
/// match was released resumes its first search's wait there
/// (docs/searching.md), where the start itself only knows its own clock.
/// A failed read keeps the start's.
pub async fn resume_queued_at(play: &Play, started: &mut Started) {
    let ticket = &started.ticket.ticket_id;
    match play.pool.search_state(&started.mode, ticket).await {
        Ok(Some(matchplane_store::pool::SearchState::Live(live))) => {
            started.queued_at = live.search.queued_at;
        }
        Ok(_) => {}
        Err(error) => {
            tracing::warn!(%error, ticket_id = %ticket, "reading a started search failed");
        }
    }
}
