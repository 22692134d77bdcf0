//! A player's routes, studio side: `DELETE
//! /v1/projects/{projectId}/players/{playerId}/searches` (end every search
//! of the player, docs/searching.md) and `DELETE
//! /v1/projects/{projectId}/players/{playerId}` (erase the player,
//! docs/retention.md, "Erasing a player").

use crate::auth::ProjectCaller;
use crate::play::status::end;
use crate::play::Play;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use matchplane_matchmaker::Code;
use matchplane_store::pool::{EndOutcome, EndResult, ModeKey};
use matchplane_store::repos::game_modes;
use matchplane_store::repos::players::{self, Erased};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use utoipa::ToSchema;

/// The searches a player-wide cancel ended.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"cancelled": ["tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9"]}))]
#[serde(rename_all = "camelCase")]
pub struct EndedSearches {
    /// Ticket ids whose search was cancelled.
    pub cancelled: Vec<String>,
}

/// Ends every live search of a player, in every game mode of the project.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/players/{playerId}/searches", tag = "tickets", operation_id = "endPlayerSearches",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("playerId" = String, Path, description = "The studio's player id (1 to 128 printable characters)", min_length = 1, max_length = 128)),
    responses((status = 200, body = EndedSearches), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 422, description = "VALIDATION_ERROR: the player id is not 1 to 128 printable characters; or a query parameter, which this route does not take", body = Problem)))]
pub async fn end_player_searches(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, player_id)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<EndedSearches>, ApiError> {
    check_player_id(&player_id)?;
    let cancelled = end_searches(&state.play, &state.db, &caller.project_id, &player_id).await?;
    Ok(Json(EndedSearches { cancelled }))
}

/// A player id in a route's path: one a ticket could carry (docs/searching.md).
///
/// # Errors
/// `422 VALIDATION_ERROR` on `playerId` otherwise.
pub(crate) fn check_player_id(player_id: &str) -> Result<(), ApiError> {
    if matchplane_matchmaker::ticket::is_valid_player_id(player_id) {
        Ok(())
    } else {
        Err(ApiError::invalid(vec![player_id_error()]))
    }
}

/// The refusal of a player id no ticket could carry.
pub(crate) fn player_id_error() -> matchplane_matchmaker::FieldError {
    matchplane_matchmaker::FieldError::new(
        "playerId",
        Code::ValidationError,
        "player ids are 1 to 128 printable characters",
    )
}

/// Cancels the live search of `player_id` in every mode of `project_id`;
/// the ticket ids whose search this ended.
async fn end_searches(
    play: &Play,
    db: &DatabaseConnection,
    project_id: &str,
    player_id: &str,
) -> Result<Vec<String>, ApiError> {
    let mut cancelled = Vec::new();
    for mode in game_modes::list(db, project_id).await? {
        let key = ModeKey::new(project_id, &mode.name);
        let live = play.pool.live_ticket_of_player(&key, player_id).await?;
        let Some(ticket_id) = live else { continue };
        if let Some(ticket) = play.tickets.get(project_id, &ticket_id).await? {
            if end(play, &ticket, EndOutcome::Cancelled).await? == EndResult::Ended {
                cancelled.push(ticket_id);
            }
        }
    }
    Ok(cancelled)
}

/// What erasing a player did: the searches it cancelled first, then what
/// it deleted and redacted, by table.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"cancelled": [], "ratingsDeleted": 2, "matchTicketsDeleted": 14,
    "matchesRedacted": 14, "backfillsRedacted": 0, "deliveriesRedacted": 28,
    "deadLettersRedacted": 0, "recordedEventsDeleted": 30}))]
#[serde(rename_all = "camelCase")]
pub struct ErasedPlayer {
    /// Ticket ids whose live search was cancelled before the erasure.
    pub cancelled: Vec<String>,
    /// Rows deleted and redacted.
    #[serde(flatten)]
    pub erased: Erased,
}

/// Erases a player's data from the project.
///
/// Cancels their live searches, deletes their ratings in every mode, their
/// seated tickets (with each ticket's `data`) and their recorded search
/// events, and replaces their id, `data` and `attributes` in the stored
/// matches, backfills, webhook deliveries and outbox dead letters that
/// name them (docs/retention.md, "Erasing a player"). Repeating it changes
/// nothing more (every count `0`). Needs an `admin` key.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/players/{playerId}", tag = "tickets", operation_id = "erasePlayer",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("playerId" = String, Path, description = "The studio's player id (1 to 128 printable characters)", min_length = 1, max_length = 128)),
    responses((status = 200, body = ErasedPlayer), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 422, description = "VALIDATION_ERROR: the player id is not 1 to 128 printable characters; or a query parameter, which this route does not take", body = Problem)))]
pub async fn erase_player(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((_project_id, player_id)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<ErasedPlayer>, ApiError> {
    check_player_id(&player_id)?;
    let project = caller.project_id.as_str();
    let play = &state.play;
    let cancelled = end_searches(play, &state.db, project, &player_id).await?;
    let hashes = play.recorder.hashes(project, &player_id);
    play.recorder.forget(&hashes);
    let erased = players::erase(&state.db, project, &player_id, &hashes).await?;
    tracing::info!(
        project_id = project,
        cancelled = cancelled.len(),
        ratings = erased.ratings_deleted,
        matches = erased.matches_redacted,
        deliveries = erased.deliveries_redacted,
        "player erased"
    );
    Ok(Json(ErasedPlayer { cancelled, erased }))
}
