//! A ticket's status (docs/searching.md), as the studio (`GET …/tickets/{ticketId}`)
//! and the REST client (`GET /v1/searches/{ticketId}`) read it.

use super::lost::{untracked, Started, Untracked};
use super::matched::{stored_match, Reader};
use super::released::{self, ReleasedReason};
use super::{rfc3339, Play};
use crate::problem::ApiError;
use matchplane_matchmaker::Code;
use matchplane_store::pool::{EndOutcome, EndResult, Ended, EndedSearch, ModeKey, SearchState};
use matchplane_store::repos::{match_status, projects, StoreError};
use matchplane_store::tickets::{StatusMessage, Ticket};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

/// `error` of a failed ticket.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"code": "GAME_MODE_DISABLED", "message": "game mode duel is disabled"}))]
pub struct TicketError {
    /// The error code, e.g. `GAME_MODE_DISABLED`.
    pub code: String,
    /// A human-readable explanation.
    pub message: String,
}

/// The values of a ticket's `status` (the OpenAPI document's
/// `TicketState`).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TicketState {
    /// Not searching yet.
    Created,
    /// Searching.
    Searching,
    /// In an open match proposal (a mode with acceptance).
    Proposed,
    /// Matched.
    Matched,
    /// Its match was released: it may search again.
    Released,
    /// Cancelled.
    Cancelled,
    /// Expired (see `reason`).
    Expired,
    /// Failed (see `error`).
    Failed,
}

/// A matched ticket's `match`: the player's own view for the game client,
/// the whole match for the studio.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum TicketMatch {
    /// What `GET /v1/searches/{ticketId}` shows.
    Player(matchplane_webhook::player_view::PlayerMatch<'static>),
    /// What `GET …/tickets/{ticketId}` shows.
    Studio(matchplane_webhook::MatchMade),
}

/// Where a ticket stands.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "status": "searching",
    "gameMode": "duel", "playerId": "ana", "expiresAt": "2026-12-01T10:10:00.000Z",
    "queuedAt": "2026-12-01T10:00:00.000Z", "waitSeconds": 2.5, "pingMs": null,
    "waitingReason": {"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 1, "seatsNeeded": 2},
    "found": 1, "needed": 2}))]
#[serde(rename_all = "camelCase")]
pub struct TicketStatus {
    /// `tkt_…`.
    pub ticket_id: String,
    /// `created`, `searching`, `proposed`, `matched`, `released` (its match
    /// was released: it may search again, keeping its first `queuedAt`),
    /// `cancelled`, `expired` or `failed`.
    #[schema(value_type = TicketState)]
    pub status: &'static str,
    /// The game mode's name.
    pub game_mode: String,
    /// The studio's player id.
    pub player_id: String,
    /// When the token stops being valid (RFC 3339).
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// When the last search started (RFC 3339), kept once it ended; `null`
    /// before any search. Always present in every status.
    #[schema(format = DateTime)]
    pub queued_at: Option<String>,
    /// Seconds the last search waited: until now while searching, until it
    /// ended (or the cycle that matched it) once ended; `null` before any
    /// search.
    pub wait_seconds: Option<f64>,
    /// Median of the last five round trips (ms) once measured (WebSocket
    /// searches); `null` before, and for REST searches.
    pub ping_ms: Option<f64>,
    /// The last cycle's reason for waiting, while searching;
    /// `{"code":"MATCH_PENDING"}` while a claimed match is being stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<matchplane_matchmaker::reasons::SearchWaitingReason>)]
    pub waiting_reason: Option<Value>,
    /// While searching: seats of the largest in-range group the last cycle
    /// built around or with this search (its party included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<u32>,
    /// While searching: seats of the smallest match its wait allows now
    /// (a relaxed shape in force, `bots.minHumans` once bots apply, a
    /// settled flexible shape's `minTeams × min`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed: Option<u32>,
    /// While searching in a mode with `composition` (docs/rules.md, "Role
    /// waits"): for each role the ticket listed, the median wait (seconds)
    /// of the players matched in that role over the last 15 minutes; a
    /// role without matches in that window is left out. Absent in modes
    /// without `composition`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = json!({"tank": 20.5, "damage": 184.0}))]
    pub role_waits: Option<std::collections::BTreeMap<String, f64>>,
    /// Why an expired search expired: `TICKET_TTL`, `REST_POLL_LAPSED`,
    /// `PONG_TIMEOUT`, `SOCKET_LAPSED` (the API instance holding its
    /// WebSocket stopped without ending it), or `SEARCH_LOST` (the pool
    /// lost the search with its data: search again, with the same ticket
    /// while the store still holds it, else with a new one). Why a
    /// released one was released: `MATCH_RELEASED` (by the studio) or
    /// `ASSIGNMENT_TIMEOUT` (nobody posted its assignment in time). Absent
    /// when not recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = super::released::status_reason_schema)]
    pub reason: Option<String>,
    /// The match, once matched and stored. The game client (`GET
    /// /v1/searches/{ticketId}`) sees its own view: `matchId`, `gameMode`,
    /// `createdAt`, `teams` (arrays of player ids), `player` (its own
    /// entry: `playerId`, `ticketId`, `team`, `partyId`, `mmr`, `latencyMs`,
    /// `waitSeconds`, and its ticket's `data` as sent), `region` and `quality`. The studio sees the whole
    /// match, as its `match.made` webhook body.
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<TicketMatch>)]
    pub match_: Option<matchplane_matchmaker::RawJson>,
    /// Why it failed, once failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TicketError>,
    /// The open match proposal, while `proposed` (a mode with acceptance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<super::proposal_view::ProposalView>,
    /// Where to play, once matched in a mode with `assignment`:
    /// `{"connection", "data"}` (the match's `data` with the player's own
    /// merged over it) once the studio posted it, `null` while the match
    /// waits for it; absent in modes without assignment.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub assignment: Option<Value>,
}

/// The pool a ticket searches in.
pub fn mode_key(ticket: &Ticket) -> ModeKey {
    ModeKey::new(&ticket.project_id, &ticket.game_mode)
}

/// `{"code":"MATCH_PENDING"}`: claimed, the match not stored yet.
pub fn match_pending() -> Value {
    json!({ "code": "MATCH_PENDING" })
}

use matchplane_matchmaker::timestamp::round_millis as millis;

/// The status of `ticket` at `now` (Unix seconds), as `reader` sees it.
///
/// # Errors
/// `500` when a store or the database fails.
pub async fn status_of(
    play: &Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
    now: f64,
    reader: Reader,
) -> Result<TicketStatus, ApiError> {
    let mut state = play
        .search_state(&mode_key(ticket), &ticket.ticket_id)
        .await?;
    // Why a ticket its pool knows nothing of is expired (the same rule as
    // the socket's: `lost.rs`).
    let mut unknown_reason = None;
    if state.is_none() {
        match untracked(play, db, ticket, now, Started::Ask).await? {
            // A stored match that seats the ticket still says it was
            // matched.
            Untracked::Matched { match_id } => {
                state = Some(SearchState::Ended(EndedSearch {
                    how: Ended::Matched { match_id },
                    queued_at: None,
                    ended_at: None,
                    reason: None,
                    socket: false,
                }));
            }
            other => unknown_reason = other.reason(),
        }
    }
    let mut view = TicketStatus {
        ticket_id: ticket.ticket_id.clone(),
        status: if ticket.expires_at <= now {
            "expired"
        } else {
            "created"
        },
        game_mode: ticket.game_mode.clone(),
        player_id: ticket.player_id.clone(),
        expires_at: rfc3339(ticket.expires_at),
        queued_at: None,
        wait_seconds: None,
        ping_ms: None,
        waiting_reason: None,
        found: None,
        needed: None,
        role_waits: None,
        reason: None,
        match_: None,
        error: None,
        proposal: None,
        assignment: None,
    };
    match state {
        // A ticket whose time ran out (`TICKET_TTL`), or whose search the
        // pool lost with its data (`SEARCH_LOST`).
        None => {
            if let Some(reason) = unknown_reason {
                view.status = "expired";
                view.reason = Some(reason.to_owned());
            }
        }
        Some(SearchState::Live(live)) => {
            view.status = "searching";
            view.queued_at = Some(rfc3339(live.search.queued_at));
            view.wait_seconds = Some(millis(now - live.search.queued_at));
            view.ping_ms = live.search.ping_ms;
            (view.waiting_reason, view.found, view.needed) =
                super::queue_status::split(live.waiting_reason.as_deref());
            if let Some(proposal) =
                Box::pin(super::proposal_view::of_ticket(play, db, ticket, now)).await?
            {
                view.status = "proposed";
                view.proposal = Some(proposal);
                // A proposed search waits for answers, not for players: the
                // reason of the cycle before the proposal no longer holds.
                (view.waiting_reason, view.found, view.needed) = (None, None, None);
            } else {
                view.role_waits = super::role_waits::of_ticket(play, db, ticket).await;
            }
        }
        Some(SearchState::Ended(ended)) => {
            view.queued_at = ended.queued_at.map(rfc3339);
            view.wait_seconds = ended.wait_seconds().map(millis);
            match ended.how {
                Ended::Matched { match_id } => {
                    let stored =
                        stored_match(db, &ticket.project_id, &match_id, &ticket.ticket_id, reader)
                            .await?;
                    match stored {
                        Some(stored) if is_released(&stored.status) => {
                            view.status = "released";
                            view.reason = ReleasedReason::of_status(&stored.status)
                                .map(|r| r.as_str().to_owned());
                            view.queued_at = stored.queued_at.map(rfc3339).or(view.queued_at);
                        }
                        Some(stored) => {
                            view.status = "matched";
                            view.queued_at = stored.queued_at.map(rfc3339).or(view.queued_at);
                            view.wait_seconds = stored.wait_seconds.map(millis);
                            view.match_ = Some(stored.view);
                            view.assignment = match stored.assignment {
                                Some(assignment) => Some(assignment),
                                None if waits_for_assignment(play, db, ticket).await? => {
                                    Some(Value::Null)
                                }
                                None => None,
                            };
                        }
                        None => match project_gone(db, ticket).await {
                            // Its match went with its project: final, as
                            // the project's live searches end.
                            Some(error) => {
                                view.status = "failed";
                                view.error = Some(error);
                            }
                            None => {
                                // The claim keeps the wait in the match,
                                // not stored yet (docs/searching.md).
                                view.status = "searching";
                                view.waiting_reason = Some(match_pending());
                                (view.queued_at, view.wait_seconds) = (None, None);
                            }
                        },
                    }
                }
                // Free to search again: a new start resumes `queuedAt`.
                Ended::Released { match_id } => {
                    view.status = "released";
                    let reason = released::reason_of(db, &ticket.project_id, &match_id).await?;
                    view.reason = reason.map(|r| r.as_str().to_owned());
                }
                Ended::Cancelled => view.status = "cancelled",
                Ended::Expired => {
                    view.status = "expired";
                    let swept = swept_reason(ticket, ended.ended_at, ended.socket);
                    view.reason = ended.reason.or(swept);
                }
                Ended::Failed { code, message } => {
                    view.status = "failed";
                    view.error = Some(TicketError { code, message });
                }
            }
        }
    }
    Ok(view)
}

/// Why a search expired when the sweep ended it (the sweep knows only
/// that its deadline passed): `TICKET_TTL` once the ticket had expired
/// when the search ended; before, the lease of the socket that held it
/// (`SOCKET_LAPSED`: its API instance stopped without ending it) or the
/// REST poll (`REST_POLL_LAPSED`) lapsed. `None` without the end's time.
fn swept_reason(ticket: &Ticket, ended_at: Option<f64>, socket: bool) -> Option<String> {
    Some(lapsed_reason(ticket, ended_at?, socket).to_owned())
}

/// Why a search whose deadline passed at `at` lapsed: its ticket's
/// expiry, else its socket's lease (`socket`) or its REST poll.
pub(crate) fn lapsed_reason(ticket: &Ticket, at: f64, socket: bool) -> &'static str {
    if ticket.expires_at <= at {
        "TICKET_TTL"
    } else if socket {
        "SOCKET_LAPSED"
    } else {
        "REST_POLL_LAPSED"
    }
}

/// The error of a matched ticket whose match is missing because its
/// project was deleted (docs/searching.md): `GAME_MODE_DISABLED`, worded
/// as the sweep fails the project's live searches. `None` while the
/// project exists (the match is not stored yet) or cannot be read.
pub(crate) async fn project_gone(db: &DatabaseConnection, ticket: &Ticket) -> Option<TicketError> {
    // Read within the stored match's wait: a database that answers nothing
    // leaves the player at `MATCH_PENDING`, not waiting on this.
    let read = projects::get(db, &ticket.project_id);
    match tokio::time::timeout(super::matched::STORED_MATCH_WAIT, read).await {
        Ok(Err(StoreError::NotFound)) => Some(TicketError {
            code: Code::GameModeDisabled.as_str().to_owned(),
            message: projects::DELETED_MESSAGE.to_owned(),
        }),
        _ => None,
    }
}

/// Whether a stored match's status says it was released (by the studio,
/// or for want of an assignment).
fn is_released(status: &str) -> bool {
    status == match_status::RELEASED || status == match_status::UNASSIGNED
}

/// Whether `ticket`'s mode has `assignment` (its matched tickets wait for
/// one).
///
/// # Errors
/// `500` (or `503`) when the mode's config cannot be read.
async fn waits_for_assignment(
    play: &Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
) -> Result<bool, ApiError> {
    let config = play
        .cache
        .mode(db, &ticket.project_id, &ticket.game_mode)
        .await?;
    Ok(config.is_some_and(|c| c.assignment.is_some()))
}

/// Ends `ticket`'s live search with `outcome` and tells its client.
/// Returns what the pool found.
///
/// # Errors
/// `500` when the store fails.
pub async fn end(play: &Play, ticket: &Ticket, outcome: EndOutcome) -> Result<EndResult, ApiError> {
    let result = play
        .pool
        .end_search(&mode_key(ticket), &ticket.ticket_id, &outcome)
        .await?;
    if result == EndResult::Ended {
        play.ends.ended(&outcome);
        crate::recording::ended(play, ticket, &outcome).await;
        let message = match outcome {
            EndOutcome::Cancelled | EndOutcome::CancelledFor { .. } => StatusMessage::Cancelled,
            EndOutcome::Expired => StatusMessage::Expired { reason: None },
            EndOutcome::ExpiredFor { reason } => StatusMessage::Expired {
                reason: Some(reason),
            },
            EndOutcome::Failed { code, message } => StatusMessage::Failed { code, message },
        };
        publish(play, &ticket.ticket_id, &message).await;
        // Leaving a proposal counts as declining it.
        Box::pin(super::answers::after_end(play, ticket)).await?;
    }
    Ok(result)
}

/// Publishes a status message; a failure is logged, not answered (the
/// client's socket also re-reads the state every second).
pub async fn publish(play: &Play, ticket_id: &str, message: &StatusMessage) {
    matchplane_store::tickets::publish(&*play.pool, ticket_id, message).await;
}
