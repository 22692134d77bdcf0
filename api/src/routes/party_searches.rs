//! Ending a whole party (docs/game-modes.md#parties): `DELETE
//! /v1/projects/{projectId}/parties/{partyId}/searches?gameMode=`, an
//! `admin` or `backend` key. A member left the party in the game: the
//! backend ends every live search of the party in that mode at once, so
//! nobody waits with `PARTY_INCOMPLETE` for the others to come back.
//!
//! The members are every player a kept ticket of the party named (the
//! party may have changed between tickets); each member's live search in
//! the mode is cancelled when its ticket carries this party. A search already matched is left
//! alone, as a single cancel leaves it, and so is one in an open proposal
//! (its player answers it); a party with no live search answers an empty
//! list (the call is idempotent).

use crate::auth::ProjectCaller;
use crate::extract::ApiQuery;
use crate::play::status::end;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use matchplane_matchmaker::Code;
use matchplane_store::pool::{EndOutcome, EndResult, ModeKey};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Query of the whole-party cancel.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct PartyQuery {
    /// The game mode whose searches end.
    pub game_mode: String,
}

/// The searches a whole-party cancel ended.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"partyId": "party-7", "gameMode": "squad", "cancelled": ["tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6DA"]}))]
#[serde(rename_all = "camelCase")]
pub struct EndedPartySearches {
    /// The party.
    pub party_id: String,
    /// The mode.
    pub game_mode: String,
    /// Ticket ids whose search this call cancelled (their clients get
    /// `cancelled`); empty when none was live.
    pub cancelled: Vec<String>,
}

/// Ends every live search of a party in one game mode (`cancelled`).
#[utoipa::path(delete, path = "/v1/projects/{projectId}/parties/{partyId}/searches", tag = "tickets", operation_id = "endPartySearches",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("partyId" = String, Path, description = "The studio's party id"), PartyQuery),
    responses((status = 200, body = EndedPartySearches), (status = 401, body = Problem), (status = 403, body = Problem), (status = 404, description = "NOT_FOUND (project) or GAME_MODE_NOT_FOUND", body = Problem), (status = 422, description = "VALIDATION_ERROR: no `gameMode`", body = Problem)))]
pub async fn end_party_searches(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, party_id)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<PartyQuery>,
    _: crate::extract::NoBody,
) -> Result<Json<EndedPartySearches>, ApiError> {
    let play = &state.play;
    let project_id = &caller.project_id;
    if play
        .cache
        .mode(&state.db, project_id, &query.game_mode)
        .await?
        .is_none()
    {
        return Err(ApiError::new(
            Code::GameModeNotFound,
            format!("no game mode named {}", query.game_mode),
        ));
    }
    let key = ModeKey::new(project_id, &query.game_mode);
    let members = play
        .tickets
        .party_members(project_id, &party_id)
        .await?
        .unwrap_or_default();
    let mut cancelled = Vec::new();
    for member in &members {
        let Some(ticket_id) = play.pool.live_ticket_of_player(&key, member).await? else {
            continue;
        };
        let Some(ticket) = play.tickets.get(project_id, &ticket_id).await? else {
            continue;
        };
        if ticket.party.as_ref().map(|p| p.id.as_str()) != Some(party_id.as_str()) {
            continue;
        }
        // Ending a proposed search declines for it (a player leaving a
        // proposal declines): the members answer the proposal themselves.
        if play.pool.proposal_of(&key, &ticket_id).await?.is_some() {
            continue;
        }
        if end(play, &ticket, EndOutcome::Cancelled).await? == EndResult::Ended {
            cancelled.push(ticket_id);
        }
    }
    Ok(Json(EndedPartySearches {
        party_id,
        game_mode: query.game_mode,
        cancelled,
    }))
}
