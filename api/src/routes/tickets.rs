//! Tickets, studio side (docs/searching.md): `POST /v1/projects/{projectId}/tickets`
//! (generate) and `GET/DELETE …/tickets/{ticketId}` (status, cancel); a
//! player's routes are in `players.rs`.
//! API key of the project (or the operator); another project's ticket
//! answers `404`.

use super::created::Created;
use crate::auth::ProjectCaller;
use crate::extract::{ApiQuery, RefusesDuplicateKeys, TypedJson};
use crate::play::answers::AnswerQuery;
use crate::play::matched::Reader;
use crate::play::status::{end, status_of, TicketStatus};
use crate::play::{rfc3339, token, unix_now};
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use matchplane_matchmaker::rules::Owner;
use matchplane_matchmaker::ticket::check_ticket;
use matchplane_matchmaker::{Attributes, Code, Party, RawAttributes};
use matchplane_store::pool::{EndOutcome, ModeKey, PlayerSearchScope};
use matchplane_store::tickets::{NewTicket, Ticket};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A party: its id and every member, the same on each member's ticket.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[schema(example = json!({"id": "party-7", "members": ["ana", "ben"]}))]
#[serde(deny_unknown_fields)]
pub struct PartyBody {
    /// Studio-chosen party id.
    #[schema(min_length = 1, max_length = 128)]
    pub id: String,
    /// Every member's player id, the ticket's player included.
    #[schema(min_items = 1)]
    pub members: Vec<String>,
}

/// Body of `POST …/tickets`; unknown fields are refused.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTicket {
    /// The game mode's name.
    #[schema(min_length = 1)]
    pub game_mode: String,
    /// The studio's player id: 1 to 128 printable characters.
    #[schema(min_length = 1, max_length = 128)]
    pub player_id: String,
    /// Matching attributes.
    #[serde(default)]
    pub attributes: RawAttributes,
    /// The player's party; every member gets a ticket with the same party.
    pub party: Option<PartyBody>,
}

/// Its fields are derived (a field given twice is refused), the party's
/// too, and [`RawAttributes`] refuses a key given twice at every depth of
/// `attributes` (tested in `api/tests/it/strict_bodies.rs`).
impl RefusesDuplicateKeys for CreateTicket {}

/// A generated ticket: the token is shown once.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "token": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9.duel.tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9.q8hYxV2yq3m1n0aZ7cB4dE5fG6hJ7kL8mN9pQ0rS1tU", "expiresAt": "2026-12-01T10:10:00.000Z"}))]
#[serde(rename_all = "camelCase")]
pub struct CreatedTicket {
    /// `tkt_…`.
    pub ticket_id: String,
    /// The game client's credential for searching with this ticket.
    pub token: String,
    /// When the token stops being valid (RFC 3339).
    #[schema(format = DateTime)]
    pub expires_at: String,
}

/// Generates a ticket for a player of a game mode.
#[utoipa::path(post, path = "/v1/projects/{projectId}/tickets", tag = "tickets", operation_id = "createTicket",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body = CreateTicket,
    responses(
        (status = 201, body = CreatedTicket,
            headers(("Location" = String, description = "`/v1/projects/{projectId}/tickets/{ticketId}`, the ticket's status"))),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 404, description = "NOT_FOUND, GAME_MODE_NOT_FOUND", body = Problem),
        (status = 409, description = "GAME_MODE_DISABLED, PLAYER_ALREADY_SEARCHING (with `ticketId` and `gameMode`; in any mode of the project under `playerSearchScope` `project`), DECLINE_COOLDOWN (with `retryAfterSeconds`)", body = Problem),
        (status = 422, description = "MMR_REQUIRED, MMR_OUT_OF_RANGE, PARTIES_NOT_ENABLED, PARTY_TOO_LARGE, INVALID_PARTY, LATENCIES_REQUIRED, VALIDATION_ERROR", body = Problem),
        (status = 429, description = "RATE_LIMITED, TICKET_LIMIT_EXCEEDED (the tier's maxPendingTickets)", body = Problem)))]
pub async fn create(
    caller: ProjectCaller,
    State(state): State<AppState>,
    TypedJson(body): TypedJson<CreateTicket>,
) -> Result<Created<Json<CreatedTicket>>, ApiError> {
    let project_id = caller.project_id;
    let play = &state.play;
    let Some(config) = play
        .cache
        .mode(&state.db, &project_id, &body.game_mode)
        .await?
    else {
        return Err(ApiError::game_mode_not_found(&body.game_mode));
    };
    if !config.enabled {
        return Err(ApiError::new(
            Code::GameModeDisabled,
            format!("game mode {} is disabled", config.name),
        ));
    }
    let mut raw = body.attributes;
    if raw.mmr.is_none() && config.ratings.as_ref().is_some_and(|r| r.enabled) {
        let rating = play
            .ratings
            .mmr_of(&project_id, &config.name, &body.player_id)
            .await
            .map_err(|e| ApiError::internal(&e))?;
        raw.mmr = rating.map(|r| crate::play::ratings::within_range(&config, r));
    }
    let party = body.party.map(|p| Party {
        id: p.id.into(),
        members: p.members,
    });
    let mut errors = Vec::new();
    if let Err(e) = check_ticket(&config, &body.player_id, party.as_ref()) {
        errors.push(e);
    }
    let owner = Owner::new(&body.player_id, party.as_ref());
    let attributes = match Attributes::parse(raw, &config, owner) {
        Ok(attributes) => Some(attributes),
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    let Some(attributes) = attributes.filter(|_| errors.is_empty()) else {
        return Err(ApiError::invalid(errors));
    };
    if config.acceptance.is_some() {
        let mode = ModeKey::new(&project_id, &config.name);
        Box::pin(crate::play::answers::check_cooldown(
            play,
            &mode,
            &body.player_id,
        ))
        .await?;
    }
    let quotas = play.cache.quotas(&state.db, &project_id).await?;
    if quotas.scope == PlayerSearchScope::Project {
        Box::pin(crate::play::player_scope::refuse_if_searching_elsewhere(
            play,
            &project_id,
            &config.name,
            &body.player_id,
        ))
        .await?;
        Box::pin(crate::play::player_scope::refuse_if_in_match(
            play,
            &state.db,
            &project_id,
            &body.player_id,
            None,
        ))
        .await?;
    }
    let now = unix_now();
    let mut id = [0u8; ulid::ULID_LEN];
    let ticket_id = ["tkt_", ulid::Ulid::new().array_to_str(&mut id)].concat();
    // thread_rng: a CSPRNG (ChaCha12) seeded and periodically reseeded from
    // the OS, without a system call per ticket.
    let token = token::generate(
        &mut rand::thread_rng(),
        &project_id,
        &config.name,
        &ticket_id,
    );
    let ticket = NewTicket {
        ticket_id,
        project_id,
        game_mode: config.name.clone(),
        player_id: body.player_id,
        party,
        attributes,
        token_hash: token::hash(&token),
        created_at: now,
        expires_at: now + f64::from(config.ticket_ttl_seconds),
    }
    .into_ticket()?;
    play.tickets
        .create_within(&ticket, now, Some(quotas.max_pending))
        .await?;
    let expires_at = rfc3339(ticket.expires_at);
    let location = format!(
        "/v1/projects/{}/tickets/{}",
        ticket.project_id, ticket.ticket_id
    );
    Ok(Created(
        location,
        Json(CreatedTicket {
            // The stored ticket's own id, moved rather than cloned.
            ticket_id: ticket.ticket_id,
            token,
            expires_at,
        }),
    ))
}

async fn project_ticket(
    state: &AppState,
    project_id: &str,
    ticket_id: &str,
) -> Result<Ticket, ApiError> {
    crate::play::matched::ticket_or_matched(&state.play, &state.db, project_id, ticket_id)
        .await?
        .ok_or_else(|| ApiError::not_found(crate::play::lost::NO_SUCH_TICKET))
}

/// A ticket's status.
#[utoipa::path(get, path = "/v1/projects/{projectId}/tickets/{ticketId}", tag = "tickets", operation_id = "getTicket",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("ticketId" = String, Path, description = "`tkt_…`")),
    responses((status = 200, body = TicketStatus), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn get(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, ticket_id)): Path<(String, String)>,
) -> Result<Json<TicketStatus>, ApiError> {
    let ticket = project_ticket(&state, &caller.project_id, &ticket_id).await?;
    Ok(Json(
        status_of(&state.play, &state.db, &ticket, unix_now(), Reader::Studio).await?,
    ))
}

/// Cancels a ticket's search (its client gets `cancelled`); answers the
/// status after. A matched ticket stays matched. A ticket that never
/// searched is revoked: it answers `cancelled` once, is forgotten (its
/// token is then `TICKET_INVALID`, its status `404`) and no longer counts
/// against `maxPendingTickets`.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/tickets/{ticketId}", tag = "tickets", operation_id = "cancelTicket",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("ticketId" = String, Path, description = "`tkt_…`")),
    responses((status = 200, body = TicketStatus), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn cancel(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, ticket_id)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<TicketStatus>, ApiError> {
    let ticket = project_ticket(&state, &caller.project_id, &ticket_id).await?;
    end(&state.play, &ticket, EndOutcome::Cancelled).await?;
    let mut status = status_of(&state.play, &state.db, &ticket, unix_now(), Reader::Studio).await?;
    // A ticket cancelled before it searched is revoked, so that it can
    // neither search nor hold a place among the pending tickets
    // (docs/operations.md, "Ticket limits").
    if status.status == "created" {
        if state.play.tickets.revoke_unstarted(&ticket).await? {
            status.status = "cancelled";
        } else {
            // Its search started after the end above: it is ended too.
            end(&state.play, &ticket, EndOutcome::Cancelled).await?;
            status = status_of(&state.play, &state.db, &ticket, unix_now(), Reader::Studio).await?;
        }
    }
    Ok(Json(status))
}

/// Answers a ticket's match proposal for its player (the studio's side).
async fn answer_studio(
    caller: ProjectCaller,
    state: &AppState,
    ticket_id: &str,
    (accept, named): (bool, Option<&str>),
) -> Result<Json<TicketStatus>, ApiError> {
    let ticket = project_ticket(state, &caller.project_id, ticket_id).await?;
    crate::play::answers::answer(&state.play, &ticket, (accept, named), unix_now()).await?;
    Ok(Json(
        status_of(&state.play, &state.db, &ticket, unix_now(), Reader::Studio).await?,
    ))
}

/// Accepts the match proposed to a ticket, for its player; answers the
/// status after. Idempotent.
#[utoipa::path(post, path = "/v1/projects/{projectId}/tickets/{ticketId}/accept", tag = "tickets", operation_id = "acceptTicketMatch",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("ticketId" = String, Path, description = "`tkt_…`"), AnswerQuery),
    responses((status = 200, body = TicketStatus), (status = 401, body = Problem), (status = 404, body = Problem), (status = 409, description = "PROPOSAL_CLOSED (a different answer after the proposal closed, an accept after a decline, or a `matchId` naming another proposal than the ticket's open one), NOT_PROPOSED", body = Problem)))]
pub async fn accept(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, ticket_id)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<AnswerQuery>,
    _: crate::extract::NoBody,
) -> Result<Json<TicketStatus>, ApiError> {
    answer_studio(caller, &state, &ticket_id, (true, query.named())).await
}

/// Declines the match proposed to a ticket, for its player: the proposal is
/// cancelled and the player cooled down in this mode.
#[utoipa::path(post, path = "/v1/projects/{projectId}/tickets/{ticketId}/decline", tag = "tickets", operation_id = "declineTicketMatch",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("ticketId" = String, Path, description = "`tkt_…`"), AnswerQuery),
    responses((status = 200, body = TicketStatus), (status = 401, body = Problem), (status = 404, body = Problem), (status = 409, description = "PROPOSAL_CLOSED (a different answer after the proposal closed, an accept after a decline, or a `matchId` naming another proposal than the ticket's open one), NOT_PROPOSED", body = Problem)))]
pub async fn decline(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, ticket_id)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<AnswerQuery>,
    _: crate::extract::NoBody,
) -> Result<Json<TicketStatus>, ApiError> {
    answer_studio(caller, &state, &ticket_id, (false, query.named())).await
}

#[cfg(test)]
mod tests;
