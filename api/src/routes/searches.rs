//! REST searches (SPEC 4), for clients that cannot hold a WebSocket:
//! `POST /v1/searches` `{"ticket"}` starts one; `GET/DELETE
//! /v1/searches/{ticketId}` with `Authorization: Ticket <token>` polls or
//! cancels it. A search not polled for `rest_poll_timeout` (30 s) ends
//! `expired`; Ping modes refuse REST (`PING_REQUIRES_WEBSOCKET`).

use crate::extract::ApiJson;
use crate::play::start::{
    rest_deadline, start_with_token, store_failed, ticket_invalid, ticket_of, Via,
};
use crate::play::status::{end, mode_key, status_of, TicketStatus};
use crate::play::unix_now;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use matchplane_matchmaker::Code;
use matchplane_store::pool::{EndOutcome, EndResult, SearchState};
use matchplane_store::tickets::Ticket;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /v1/searches`; unknown fields are refused.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartSearch {
    /// The ticket's token.
    pub ticket: String,
}

/// A search just started.
#[derive(Debug, Serialize, ToSchema)]
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
        value.map(TicketToken).ok_or_else(ticket_invalid)
    }
}

/// Starts a search that the client polls.
#[utoipa::path(post, path = "/v1/searches", tag = "searches",
    request_body = StartSearch,
    responses(
        (status = 202, body = SearchStarted),
        (status = 401, description = "TICKET_INVALID", body = Problem),
        (status = 409, description = "SEARCH_ALREADY_ACTIVE, PLAYER_ALREADY_SEARCHING, TICKET_ALREADY_MATCHED, GAME_MODE_DISABLED", body = Problem),
        (status = 422, description = "PING_REQUIRES_WEBSOCKET", body = Problem),
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
    let ticket = ticket_of(&state.play, token).await?;
    if ticket.ticket_id != ticket_id {
        return Err(ApiError::not_found("no such search for this ticket"));
    }
    Ok(ticket)
}

/// Polls a search: answers its status and keeps it alive for another
/// poll period. An overdue search ends `expired` here.
#[utoipa::path(get, path = "/v1/searches/{ticketId}", tag = "searches",
    params(("ticketId" = String, Path, description = "`tkt_…`")),
    security(("ticket" = [])),
    responses((status = 200, body = TicketStatus), (status = 401, description = "TICKET_INVALID", body = Problem), (status = 404, body = Problem)))]
pub async fn get(
    State(state): State<AppState>,
    TicketToken(token): TicketToken,
    Path(ticket_id): Path<String>,
) -> Result<Json<TicketStatus>, ApiError> {
    let play = &state.play;
    let ticket = own_ticket(&state, &token, &ticket_id).await?;
    let now = unix_now();
    let mode = mode_key(&ticket);
    if let Some(SearchState::Live(live)) = play
        .pool
        .search_state(&mode, &ticket.ticket_id)
        .await
        .map_err(store_failed)?
    {
        if live.deadline <= now {
            end(play, &ticket, EndOutcome::Expired).await?;
        } else {
            play.pool
                .touch_search(&mode, &ticket.ticket_id, rest_deadline(play, &ticket, now))
                .await
                .map_err(store_failed)?;
        }
    }
    Ok(Json(status_of(play, &ticket, now).await?))
}

/// Cancels a search; answers the status after.
#[utoipa::path(delete, path = "/v1/searches/{ticketId}", tag = "searches",
    params(("ticketId" = String, Path, description = "`tkt_…`")),
    security(("ticket" = [])),
    responses((status = 200, body = TicketStatus), (status = 401, description = "TICKET_INVALID", body = Problem), (status = 404, body = Problem), (status = 409, description = "TICKET_ALREADY_MATCHED", body = Problem)))]
pub async fn cancel(
    State(state): State<AppState>,
    TicketToken(token): TicketToken,
    Path(ticket_id): Path<String>,
) -> Result<Json<TicketStatus>, ApiError> {
    let ticket = own_ticket(&state, &token, &ticket_id).await?;
    if let EndResult::Matched { .. } = end(&state.play, &ticket, EndOutcome::Cancelled).await? {
        return Err(ApiError::new(
            Code::TicketAlreadyMatched,
            "the search was matched before it could be cancelled",
        ));
    }
    Ok(Json(status_of(&state.play, &ticket, unix_now()).await?))
}
