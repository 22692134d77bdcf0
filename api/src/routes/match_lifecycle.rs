//! A made match's lifecycle on the studio's side (docs/acceptance.md):
//!
//! - `POST /v1/projects/{projectId}/matches/{matchId}/release`: the studio
//!   cannot host the match. Within the release window (max(120 s, the
//!   mode's `assignment.waitSeconds`) from when it was made) the match
//!   becomes `released`, nobody is cooled down, and its tickets `released`:
//!   each may start a search again until it expires, resuming its first
//!   `queuedAt`; sockets still waiting for an assignment search again at
//!   once (`requeued`); its open backfill request is closed. The same
//!   release again answers the match as it is;
//!   after the window, on a match not made, or on one whose result was
//!   reported (it was played), `409 RELEASE_WINDOW_CLOSED`.
//! - `POST …/matches/{matchId}/assignment` (modes with `assignment`): where
//!   to play. Each player is told `assigned` with the match's `data` and
//!   its own merged over it (no player sees another's); one assignment per
//!   match (`409 ALREADY_ASSIGNED`).
//!
//! API key of the project (`backend` scope), or the operator. The row's
//! status changes first (a compare-and-set), then the pool store's records
//! and the players' channels, so a retry after a failure between the two
//! finishes the release.

use super::created::Created;
use crate::auth::ProjectCaller;
use crate::extract::{parse_value, RawJson};
use crate::problem::{ApiError, Problem};
use crate::routes::matches::MatchView;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::Utc;
use matchplane_matchmaker::assignment::{merged_data, release_window};
use matchplane_matchmaker::{Code, FieldError, GameModeConfig};
use matchplane_store::entities::match_;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::match_status::{self, AssignOutcome, ReleaseOutcome, RELEASED};
use matchplane_store::repos::{backfills, match_tickets, matches};
use matchplane_store::tickets::{publish, StatusMessage};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use utoipa::ToSchema;

/// Longest `connection` (bytes).
pub const MAX_CONNECTION_BYTES: usize = 512;
/// Longest `data` object, the match's or a player's (bytes of its JSON).
pub const MAX_DATA_BYTES: usize = 4096;
/// Counter: made matches released, by `status` (`released` here; the
/// worker counts `unassigned`).
pub const RELEASES: &str = "matchplane_match_releases_total";

/// The view of `row` with its tickets' `data`.
async fn view_of(state: &AppState, row: match_::Model) -> Result<MatchView, ApiError> {
    let tickets = match_tickets::of_matches(&state.db, &row.project_id, &[&row.id]).await?;
    let current = backfills::current_rosters(&state.db, &row.project_id, &[&row.id]).await?;
    MatchView::of(row, &tickets, &current)
}

/// The config of the mode `row` was made in, `None` when that mode was
/// deleted, also once a mode of the same name was created again: a new
/// mode, whose `assignment` block is not the match's (docs/game-modes.md,
/// "Changing a mode").
async fn own_config(
    state: &AppState,
    row: &match_::Model,
) -> Result<Option<GameModeConfig>, ApiError> {
    let Some(mode) = matches::own_mode(&state.db, row).await? else {
        return Ok(None);
    };
    serde_json::from_value(mode.config)
        .map(Some)
        .map_err(|e| ApiError::internal(&e))
}

/// Releases a made match the studio cannot host.
#[utoipa::path(post, path = "/v1/projects/{projectId}/matches/{matchId}/release", tag = "matches", operation_id = "releaseMatch",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    responses(
        (status = 200, description = "The match, `status` `released` (also when it was released already)", body = MatchView),
        (status = 404, description = "NOT_FOUND: no such match", body = Problem),
        (status = 409, description = "RELEASE_WINDOW_CLOSED: the match is not made (a proposal, cancelled, unassigned), was made longer ago than max(120 s, `assignment.waitSeconds`), or its result was reported", body = Problem)))]
pub async fn release(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<MatchView>, ApiError> {
    let row = matches::get(&state.db, &project_id, &match_id).await?;
    let config = own_config(&state, &row).await?;
    let window = release_window(config.as_ref());
    let window = chrono::Duration::milliseconds((window * 1000.0) as i64);
    let now = Utc::now();
    let mode = ModeKey::new(&project_id, &row.game_mode);
    // The same again on a repeated release: a failure after the status
    // changed is finished by the retry.
    let outcome = matchplane_store::released::release_match::<ApiError>(
        &state.db,
        state.play.pool.as_ref(),
        &mode,
        &match_id,
        (RELEASED, &StatusMessage::Released),
        window,
        now,
    )
    .await?;
    let row = match outcome {
        ReleaseOutcome::Released(row) => {
            metrics::with_local_recorder(&*state.recorder, || {
                metrics::counter!(RELEASES, "status" => RELEASED).increment(1);
            });
            row
        }
        ReleaseOutcome::Already(row) => row,
        ReleaseOutcome::WindowClosed(row) => {
            let detail = if row.status == match_status::MADE {
                format!("match {match_id} was made too long ago to be released")
            } else {
                format!("match {match_id} is {}, not made", row.status)
            };
            return Err(ApiError::with_status(
                StatusCode::CONFLICT,
                Code::ReleaseWindowClosed.as_str(),
                detail,
            ));
        }
        // Its ratings were applied: it was played (docs/acceptance.md,
        // "Releasing a match").
        ReleaseOutcome::Reported(_) => {
            return Err(ApiError::with_status(
                StatusCode::CONFLICT,
                Code::ReleaseWindowClosed.as_str(),
                format!("match {match_id}'s result was reported: a played match is not released"),
            ));
        }
    };
    Ok(Json(view_of(&state, row).await?))
}

/// `POST …/assignment`: where the match is played.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"connection": "203.0.113.7:7777", "data": {"map": "dust"}, "players": {"ana": {"data": {"token": "a1"}}}}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssignmentBody {
    /// Where to connect (1 to 512 bytes).
    #[schema(min_length = 1, max_length = 512)]
    pub connection: String,
    /// Data for every player (a JSON object of at most 4 KiB).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub data: Option<Map<String, Value>>,
    /// Per player id, that player's own `data`, merged over the match's in
    /// what it is told (never shown to another player).
    #[serde(default)]
    pub players: Option<HashMap<String, PlayerAssignment>>,
}

/// One player's part of an assignment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlayerAssignment {
    /// The player's own data (a JSON object of at most 4 KiB).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub data: Option<Map<String, Value>>,
}

/// Every broken rule of `body` for a match seating `players`.
fn check_body(body: &AssignmentBody, players: &[(String, String)]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let size = |data: &Map<String, Value>| serde_json::to_vec(data).map_or(usize::MAX, |v| v.len());
    if body.connection.is_empty() || body.connection.len() > MAX_CONNECTION_BYTES {
        errors.push(FieldError::new(
            "connection",
            Code::ValidationError,
            format!("connection must be 1 to {MAX_CONNECTION_BYTES} bytes"),
        ));
    }
    if body.data.as_ref().is_some_and(|d| size(d) > MAX_DATA_BYTES) {
        errors.push(FieldError::new(
            "data",
            Code::ValidationError,
            format!("data must be at most {MAX_DATA_BYTES} bytes of JSON"),
        ));
    }
    let mut named: Vec<&String> = body.players.iter().flat_map(|p| p.keys()).collect();
    named.sort();
    for player in named {
        let Some(own) = body.players.as_ref().and_then(|p| p.get(player)) else {
            continue;
        };
        if !players.iter().any(|(_, id)| id == player) {
            errors.push(FieldError::new(
                format!("players.{player}"),
                Code::ValidationError,
                format!("player {player} is not in this match"),
            ));
        }
        if own.data.as_ref().is_some_and(|d| size(d) > MAX_DATA_BYTES) {
            errors.push(FieldError::new(
                format!("players.{player}.data"),
                Code::ValidationError,
                format!("data must be at most {MAX_DATA_BYTES} bytes of JSON"),
            ));
        }
    }
    errors
}

/// What `player_id` is told of `assignment` (the stored body): the
/// connection and the match's `data` with the player's own merged over it.
pub fn assigned_to(assignment: &Value, player_id: &str) -> StatusMessage {
    let own = assignment
        .get("players")
        .and_then(|p| p.get(player_id))
        .and_then(|p| p.get("data"));
    StatusMessage::Assigned {
        connection: assignment
            .get("connection")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        data: merged_data(assignment.get("data"), own),
    }
}

/// Tells a made match's players where to play.
#[utoipa::path(post, path = "/v1/projects/{projectId}/matches/{matchId}/assignment", tag = "matches", operation_id = "assignMatch",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    request_body = AssignmentBody,
    responses(
        (status = 201, description = "Stored and sent: the match with its `assignment`", body = MatchView,
            headers(("Location" = String, description = "`/v1/projects/{projectId}/matches/{matchId}`, the match that carries it"))),
        (status = 404, description = "NOT_FOUND: no such match", body = Problem),
        (status = 409, description = "ALREADY_ASSIGNED: the match has its assignment", body = Problem),
        (status = 422, description = "VALIDATION_ERROR: every broken rule of the body (`connection`, `data`, `players.<playerId>`), a mode without `assignment` or a match not made (field `matchId`)", body = Problem)))]
pub async fn assign(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
    RawJson(raw): RawJson,
) -> Result<Created<Json<MatchView>>, ApiError> {
    let body: AssignmentBody = parse_value(raw.clone())?;
    let row = matches::get(&state.db, &project_id, &match_id).await?;
    let config = own_config(&state, &row).await?;
    if config
        .as_ref()
        .and_then(|c| c.assignment.as_ref())
        .is_none()
    {
        return Err(ApiError::invalid(vec![FieldError::new(
            "matchId",
            Code::ValidationError,
            format!(
                "game mode {} has no assignment block (or the match's mode was deleted)",
                row.game_mode
            ),
        )]));
    }
    let players = match_status::seated_players(&row);
    let errors = check_body(&body, &players);
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let row = match match_status::assign(&state.db, &project_id, &match_id, raw).await? {
        AssignOutcome::Assigned(row) => row,
        AssignOutcome::AlreadyAssigned(_) => {
            return Err(ApiError::with_status(
                StatusCode::CONFLICT,
                Code::AlreadyAssigned.as_str(),
                format!("match {match_id} has its assignment already"),
            ))
        }
        AssignOutcome::NotMade(row) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "matchId",
                Code::ValidationError,
                format!("match {match_id} is {}, not made", row.status),
            )]))
        }
    };
    if let Some(assignment) = &row.assignment {
        for (ticket_id, player_id) in &players {
            let message = assigned_to(assignment, player_id);
            publish(state.play.pool.as_ref(), ticket_id, &message).await;
        }
    }
    let location = format!("/v1/projects/{project_id}/matches/{match_id}");
    Ok(Created(location, Json(view_of(&state, row).await?)))
}
