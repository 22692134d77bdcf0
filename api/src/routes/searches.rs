//! REST searches (docs/searching.md), for clients that cannot hold a WebSocket:
//! `POST /v1/searches` `{"ticket"}` starts one; `GET/DELETE
//! /v1/searches/{ticketId}` with `Authorization: Ticket <token>` polls or
//! cancels it. A search not polled for `rest_poll_timeout` (30 s) ends
//! `expired`; Ping modes refuse REST (`PING_REQUIRES_WEBSOCKET`).

use crate::extract::{ApiJson, ApiQuery};
use crate::play::answers::AnswerQuery;
use crate::play::matched::Reader;
use crate::play::start::{rest_deadline, start_with_token, ticket_of, Via};
use crate::play::status::{end, mode_key, status_of, TicketStatus};
use crate::play::unix_now;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use matchplane_matchmaker::{Algorithm, Code};
use matchplane_store::pool::{EndOutcome, EndResult, ModeKey, SearchState};
use matchplane_store::tickets::Ticket;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /v1/searches`; unknown fields are refused.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"ticket": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9.duel.tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9.q8hYxV2yq3m1n0aZ7cB4dE5fG6hJ7kL8mN9pQ0rS1tU"}))]
#[serde(deny_unknown_fields)]
pub struct StartSearch {
    /// The ticket's token.
    #[schema(min_length = 1)]
    pub ticket: String,
}

/// A search just started.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "status": "searching"}))]
#[serde(rename_all = "camelCase")]
pub struct SearchStarted {
    /// `tkt_…`: the id to poll.
    pub ticket_id: String,
    /// Always `searching`.
    pub status: &'static str,
}

/// The token of `Authorization: Ticket <token>` (never logged).
pub struct TicketToken(String);

impl<S: Send + Sync> FromRequestParts<S> for TicketToken {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let value = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("ticket"))
            .map(|(_, token)| token.trim().to_owned())
            .filter(|t| !t.is_empty());
        value
            .map(TicketToken)
            .ok_or_else(|| no_ticket_header(parts))
    }
}

/// `401 TICKET_INVALID` for a request without `Authorization: Ticket
/// <token>`, saying what was wrong: no header, or another scheme (a
/// studio's Bearer key is not a game client's ticket).
fn no_ticket_header(parts: &Parts) -> ApiError {
    let scheme = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(' ').next().unwrap_or_default().to_owned());
    let detail = match scheme {
        None => "this route needs `Authorization: Ticket <token>`, the ticket's token".to_owned(),
        Some(s) if s.eq_ignore_ascii_case("ticket") => {
            "`Authorization: Ticket <token>` carries no token".to_owned()
        }
        Some(s) => format!(
            "this route needs `Authorization: Ticket <token>`, the ticket's token, not a `{s}` \
             credential: the studio reads a ticket at /v1/projects/{{projectId}}/tickets/{{ticketId}}"
        ),
    };
    ApiError::new(Code::TicketInvalid, detail)
}

/// Starts a search that the client polls.
#[utoipa::path(post, path = "/v1/searches", tag = "searches", operation_id = "startSearch",
    description = "Starts a search that the client polls. The credential is the body's `ticket` \
        (the ticket's token), so no header is needed: the security requirement is empty.",
    security(()),
    request_body = StartSearch,
    responses(
        (status = 202, body = SearchStarted),
        (status = 401, description = "TICKET_INVALID", body = Problem),
        (status = 409, description = "SEARCH_ALREADY_ACTIVE, PLAYER_ALREADY_SEARCHING, TICKET_ALREADY_MATCHED, GAME_MODE_DISABLED", body = Problem),
        (status = 422, description = "PING_REQUIRES_WEBSOCKET; or the code a cycle would fail the search with when the mode's config changed since the ticket was generated and rules it out (MMR_REQUIRED, MMR_OUT_OF_RANGE, LATENCIES_REQUIRED, PARTIES_NOT_ENABLED, PARTY_TOO_LARGE, INVALID_PARTY, ATTRIBUTE_REQUIRED, ATTRIBUTE_NOT_ALLOWED, VALIDATION_ERROR; `errors[0].field` names the field)", body = Problem),
        (status = 429, description = "QUOTA_EXCEEDED", body = Problem)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<StartSearch>,
) -> Result<(StatusCode, Json<SearchStarted>), ApiError> {
    let started = start_with_token(&state.play, &state.db, &body.ticket, Via::Rest).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(SearchStarted {
            ticket_id: started.ticket.ticket_id,
            status: "searching",
        }),
    ))
}

async fn own_ticket(state: &AppState, token: &str, ticket_id: &str) -> Result<Ticket, ApiError> {
    let ticket = ticket_of(&state.play, &state.db, token).await?;
    if ticket.ticket_id != ticket_id {
        return Err(ApiError::not_found("no such search for this ticket"));
    }
    Ok(ticket)
}

/// Polls a search: answers its status and keeps it alive for another
/// poll period. A search whose ticket expired, or whose socket's lease
/// ran out, ends `expired` here; one whose poll deadline passed is the
/// worker's to end (the worker holds off after Redis was out of reach, when
/// nobody could poll: docs/operations.md), and a poll that finds it still
/// live renews it.
///
/// A search in a mode switched to the Ping algorithm ends `failed`
/// `PING_REQUIRES_WEBSOCKET` here.
#[utoipa::path(get, path = "/v1/searches/{ticketId}", tag = "searches", operation_id = "getSearch",
    params(("ticketId" = String, Path, description = "`tkt_…`")),
    security(("ticket" = [])),
    responses((status = 200, body = TicketStatus), (status = 401, description = "TICKET_INVALID: unknown or expired token, or no `Authorization: Ticket <token>` (a Bearer key is refused, with a detail saying so)", body = Problem), (status = 404, description = "NOT_FOUND: the token is another ticket's", body = Problem)))]
pub async fn get(
    State(state): State<AppState>,
    TicketToken(token): TicketToken,
    Path(ticket_id): Path<String>,
) -> Result<Json<TicketStatus>, ApiError> {
    let play = &state.play;
    let ticket = own_ticket(&state, &token, &ticket_id).await?;
    let now = unix_now();
    let mode = mode_key(&ticket);
    if let Some(SearchState::Live(live)) = play.pool.search_state(&mode, &ticket.ticket_id).await? {
        if live.deadline <= now && (ticket.expires_at <= now || live.socket) {
            let outcome = EndOutcome::ExpiredFor {
                reason: crate::play::status::lapsed_reason(&ticket, now, live.socket).to_owned(),
            };
            end(play, &ticket, outcome).await?;
        } else if !live.socket && pinged(&state, &mode).await? {
            // A polled search in a mode switched to Ping can never be
            // matched: ping is measured over the WebSocket only
            // (docs/searching.md).
            let outcome = EndOutcome::Failed {
                code: Code::PingRequiresWebsocket.as_str().to_owned(),
                message: "this game mode now matches on ping, which is measured live: \
                    search over the WebSocket"
                    .to_owned(),
            };
            end(play, &ticket, outcome).await?;
        } else if !live.socket {
            // A polled search lives another poll period; a socket's is its
            // socket's to renew (docs/searching.md).
            play.pool
                .touch_search(&mode, &ticket.ticket_id, rest_deadline(play, &ticket, now))
                .await?;
        }
    }
    Ok(Json(
        status_of(play, &state.db, &ticket, now, Reader::Player).await?,
    ))
}

/// Whether `mode` matches on ping now (a deleted mode does not).
async fn pinged(state: &AppState, mode: &ModeKey) -> Result<bool, ApiError> {
    let config = state
        .play
        .cache
        .mode(&state.db, &mode.project_id, &mode.mode)
        .await?;
    Ok(config.is_some_and(|c| matches!(c.algorithm, Algorithm::Ping { .. })))
}

/// Cancels a search; answers the status after.
#[utoipa::path(delete, path = "/v1/searches/{ticketId}", tag = "searches", operation_id = "cancelSearch",
    params(("ticketId" = String, Path, description = "`tkt_…`")),
    security(("ticket" = [])),
    responses((status = 200, body = TicketStatus), (status = 401, description = "TICKET_INVALID: unknown or expired token, or no `Authorization: Ticket <token>` (a Bearer key is refused, with a detail saying so)", body = Problem), (status = 404, description = "NOT_FOUND: the token is another ticket's", body = Problem), (status = 409, description = "TICKET_ALREADY_MATCHED", body = Problem)))]
pub async fn cancel(
    State(state): State<AppState>,
    TicketToken(token): TicketToken,
    Path(ticket_id): Path<String>,
    _: crate::extract::NoBody,
) -> Result<Json<TicketStatus>, ApiError> {
    let ticket = own_ticket(&state, &token, &ticket_id).await?;
    if let EndResult::Matched { .. } = end(&state.play, &ticket, EndOutcome::Cancelled).await? {
        return Err(ApiError::new(
            Code::TicketAlreadyMatched,
            "the search was matched before it could be cancelled",
        ));
    }
    Ok(Json(
        status_of(&state.play, &state.db, &ticket, unix_now(), Reader::Player).await?,
    ))
}

/// Answers the search's match proposal with `accept` (REST client).
async fn answer_rest(
    state: &AppState,
    token: &str,
    ticket_id: &str,
    accept: bool,
    named: Option<&str>,
) -> Result<Json<TicketStatus>, ApiError> {
    let ticket = own_ticket(state, token, ticket_id).await?;
    crate::play::answers::answer(&state.play, &ticket, (accept, named), unix_now()).await?;
    Ok(Json(
        status_of(&state.play, &state.db, &ticket, unix_now(), Reader::Player).await?,
    ))
}

/// Accepts the match proposed to this search; answers the status after.
/// Idempotent; an accept never moves the deadline.
#[utoipa::path(post, path = "/v1/searches/{ticketId}/accept", tag = "searches", operation_id = "acceptMatch",
    params(("ticketId" = String, Path, description = "`tkt_…`"), AnswerQuery),
    security(("ticket" = [])),
    responses((status = 200, body = TicketStatus), (status = 401, description = "TICKET_INVALID", body = Problem), (status = 404, description = "NOT_FOUND: the token is another ticket's", body = Problem), (status = 409, description = "PROPOSAL_CLOSED (a different answer after the proposal closed, an accept after a decline, or a `matchId` naming another proposal than the ticket's open one), NOT_PROPOSED", body = Problem)))]
pub async fn accept(
    State(state): State<AppState>,
    TicketToken(token): TicketToken,
    Path(ticket_id): Path<String>,
    ApiQuery(query): ApiQuery<AnswerQuery>,
    _: crate::extract::NoBody,
) -> Result<Json<TicketStatus>, ApiError> {
    answer_rest(&state, &token, &ticket_id, true, query.named()).await
}

/// Declines the match proposed to this search: the proposal is cancelled
/// and the player cooled down in this mode; answers the status after.
#[utoipa::path(post, path = "/v1/searches/{ticketId}/decline", tag = "searches", operation_id = "declineMatch",
    params(("ticketId" = String, Path, description = "`tkt_…`"), AnswerQuery),
    security(("ticket" = [])),
    responses((status = 200, body = TicketStatus), (status = 401, description = "TICKET_INVALID", body = Problem), (status = 404, description = "NOT_FOUND: the token is another ticket's", body = Problem), (status = 409, description = "PROPOSAL_CLOSED (a different answer after the proposal closed, an accept after a decline, or a `matchId` naming another proposal than the ticket's open one), NOT_PROPOSED", body = Problem)))]
pub async fn decline(
    State(state): State<AppState>,
    TicketToken(token): TicketToken,
    Path(ticket_id): Path<String>,
    ApiQuery(query): ApiQuery<AnswerQuery>,
    _: crate::extract::NoBody,
) -> Result<Json<TicketStatus>, ApiError> {
    answer_rest(&state, &token, &ticket_id, false, query.named()).await
}
