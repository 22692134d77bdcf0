//! Backfill requests (docs/backfill.md): `POST /v1/projects/{projectId}/matches/{matchId}/backfill`
//! with the match's current roster, `GET` of the match's requests, and
//! `GET`, `PUT` (a newer roster) and `DELETE` (close) on
//! `…/backfill/{backfillId}`. API key of the project
//! (`backend` scope), or the operator.
//!
//! The request is stored in the database; its seats live in the pool
//! store beside the mode's pool, where the worker's fills take them
//! atomically. A close and a new roster change the pool store's state
//! first (in one step with respect to fills), then the row.

use super::created::Created;
use crate::auth::ProjectCaller;
use crate::extract::RawJson;
use crate::play::matched::fill_data;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::roles::open::OpenRoles;
use matchplane_matchmaker::{Code, OpenBackfill};
use matchplane_store::entities::{backfill, match_ticket};
use matchplane_store::pool::{BackfillChange, BackfillStatus, ModeKey};
use matchplane_store::repos::backfills::{self, OpenError};
use matchplane_store::repos::{match_status, match_tickets, matches, StoreError};
use matchplane_webhook::payload::Team;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// A backfill request as the studio sees it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"backfillId": "bf_01JDZ8M9X2K7P3R5T8V1W4Y6Z0", "matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0", "gameMode": "ranked-5v5", "status": "open", "openSeats": [1, 0], "createdAt": "2026-12-01T10:00:00.000Z", "expiresAt": "2026-12-01T10:02:00.000Z", "fills": []}))]
#[serde(rename_all = "camelCase")]
pub struct BackfillView {
    /// `bf_…`.
    pub backfill_id: String,
    /// The running match, `mat_…`.
    pub match_id: String,
    /// The match's game mode.
    pub game_mode: String,
    /// `open`, `filled` (no seat left), `closed` (by the studio) or
    /// `expired` (`ttlSeconds` passed).
    pub status: String,
    /// Open seats per team, in match-shape order (players).
    pub open_seats: Vec<u32>,
    /// In a role-queue mode, the open seats of each team by role, in
    /// match-shape order (`any`: a seat any role may take); a fill seats
    /// each newcomer in an open role it listed (docs/rules.md, "Backfill
    /// by role"). Absent in a mode without `composition`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<HashMap<String, u32>>>, nullable = false, example = json!([{"any": 0, "damage": 1, "support": 0, "tank": 0}, {"any": 0, "damage": 0, "support": 0, "tank": 0}]))]
    pub open_roles: Option<Vec<OpenRoles>>,
    /// The match's current values the last roster sent (`attributes`,
    /// docs/rules.md#backfill), which newcomers are checked against; absent
    /// when it sent none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false, example = json!({"maps": ["dust"]}))]
    pub attributes: Option<matchplane_matchmaker::rules::DeclaredValues>,
    /// When the request was opened.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// When it expires unless filled or closed first.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub expires_at: DateTime<Utc>,
    /// Each fill, oldest first.
    pub fills: Vec<FillView>,
}

/// One fill of a request.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FillView {
    /// `bff_…`, also the `webhook-id` of its `match.backfilled`.
    pub fill_id: String,
    /// When it was made.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub at: DateTime<Utc>,
    /// The new players by team, as in the `match.backfilled` body (each
    /// newcomer's ticket `data` in its entry, as sent).
    #[schema(value_type = Vec<Object>)]
    pub teams: Vec<Team>,
    /// Open seats per team after it.
    #[schema(value_type = Vec<u32>)]
    pub open_seats_left: Value,
}

mod bots;
pub mod list;
mod roster;

use roster::{check, context, departed, match_players, not_made, read_roster, stored_roster};

fn secs(at: DateTime<Utc>) -> f64 {
    at.timestamp_micros() as f64 / 1e6
}

/// A stored fill's `teams` (fill `fill_id`) with each newcomer's ticket
/// `data` from `tickets`, the match's stored tickets, byte for byte as its
/// `match.backfilled` body carries it.
///
/// # Errors
/// `500` when the stored teams cannot be read as a webhook's.
fn with_data(
    fill_id: &str,
    teams: Value,
    tickets: &[match_ticket::Model],
) -> Result<Vec<Team>, ApiError> {
    let mut teams: Vec<Team> = serde_json::from_value(teams).map_err(|e| {
        ApiError::from(StoreError::Corrupt(format!("backfill fill {fill_id}: {e}")))
    })?;
    fill_data(&mut teams, tickets);
    Ok(teams)
}

async fn view(
    state: &AppState,
    mode: &ModeKey,
    row: backfill::Model,
    now: DateTime<Utc>,
) -> Result<BackfillView, ApiError> {
    let live = state.play.pool.backfill(mode, &row.id).await?;
    let (status, open_seats, open_roles) = match live {
        Some(live) => (
            match live.status {
                BackfillStatus::Open => backfills::status_at(&row, now).to_owned(),
                other => other.as_str().to_owned(),
            },
            live.backfill.open_seats,
            live.backfill.open_roles,
        ),
        None => (
            backfills::status_at(&row, now).to_owned(),
            serde_json::from_value(row.open_seats.clone()).unwrap_or_default(),
            row.open_roles
                .clone()
                .and_then(|r| serde_json::from_value(r).ok())
                .unwrap_or_default(),
        ),
    };
    let fills = backfills::fills(&state.db, &row.project_id, &row.id).await?;
    // A fill is stored without its newcomers' `data` (kept with their
    // tickets, as a match's own players'): put back, each fill's teams are
    // its `match.backfilled` body's (docs/backfill.md).
    let tickets = if fills.is_empty() {
        Vec::new()
    } else {
        match_tickets::of_matches(&state.db, &row.project_id, &[row.match_id.as_str()]).await?
    };
    let fills = fills
        .into_iter()
        .map(|f| {
            Ok(FillView {
                teams: with_data(&f.id, f.teams, &tickets)?,
                fill_id: f.id,
                at: f.created_at,
                open_seats_left: f.open_seats_left,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    let attributes = row
        .roster
        .get("attributes")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
        .filter(|a: &matchplane_matchmaker::rules::DeclaredValues| !a.is_empty());
    Ok(BackfillView {
        backfill_id: row.id,
        match_id: row.match_id,
        game_mode: row.game_mode,
        status,
        open_seats,
        open_roles: (!open_roles.is_empty()).then_some(open_roles),
        attributes,
        created_at: row.created_at,
        expires_at: row.expires_at,
        fills,
    })
}

/// Opens a backfill request for a running match.
#[utoipa::path(post, path = "/v1/projects/{projectId}/matches/{matchId}/backfill", tag = "backfill", operation_id = "openBackfill",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    request_body = matchplane_matchmaker::backfill::roster::Roster,
    responses(
        (status = 201, body = BackfillView,
            headers(("Location" = String, description = "`/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}`"))),
        (status = 404, description = "NOT_FOUND: no such match", body = Problem),
        (status = 409, description = "BACKFILL_ALREADY_OPEN (the body names its `backfillId`)", body = Problem),
        (status = 422, description = "NO_OPEN_SEATS, INVALID_ROSTER (each broken rule's field), VALIDATION_ERROR (a value in `attributes`), listed together; BACKFILL_NOT_ENABLED (the mode has no enabled `backfill` block, or is disabled); VALIDATION_ERROR on `matchId` when the match is not made (a proposal, cancelled, released, unassigned) or its mode was deleted", body = Problem)))]
pub async fn open(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
    RawJson(body): RawJson,
) -> Result<Created<Json<BackfillView>>, ApiError> {
    // The body's shape first, as every strict body: a malformed one is
    // refused naming its fields whatever the match.
    let (roster, untyped) = read_roster(body)?;
    let ctx = context(&state, &project_id, &match_id).await?;
    let (values, roster, seats) = check(&ctx, roster, &untyped)?;
    let left = departed(&state, &project_id, &match_id, &roster).await?;
    let ttl = ctx.config.backfill_enabled().map_or(120, |b| b.ttl_seconds);
    let now = Utc::now();
    let expires_at = now + chrono::Duration::seconds(i64::from(ttl));
    let id = format!("bf_{}", ulid::Ulid::new());
    let row = backfill::Model {
        id: id.clone(),
        project_id: project_id.clone(),
        game_mode: ctx.row.game_mode.clone(),
        match_id: match_id.clone(),
        open_match_id: Some(match_id.clone()),
        status: backfills::OPEN.to_owned(),
        roster: stored_roster(&roster, now, &left)?,
        open_seats: serde_json::json!(seats.seats.open_seats),
        open_roles: seats.roles_json(),
        fills: 0,
        seats_filled: 0,
        revision: 1,
        created_at: now,
        updated_at: now,
        expires_at,
    };
    match backfills::open(&state.db, row.clone(), now).await {
        Ok(()) => {}
        Err(OpenError::AlreadyOpen(open)) => {
            return Err(ApiError::new(
                Code::BackfillAlreadyOpen,
                format!("backfill {open} is already open for match {match_id}"),
            )
            .with_backfill_id(open))
        }
        Err(OpenError::Store(err)) => return Err(err.into()),
    }
    let live = OpenBackfill {
        backfill_id: id.as_str().into(),
        match_id: match_id.as_str().into(),
        revision: 1,
        open_seats: seats.seats.open_seats,
        opened_at: secs(now),
        expires_at: secs(expires_at),
        mean_mmr: seats.seats.mean_mmr,
        pings: match_players(&ctx.row)
            .into_iter()
            .filter_map(|p| p.2)
            .collect(),
        region: ctx.row.region.as_deref().map(Into::into),
        roster: values,
        open_roles: seats.roles,
    };
    if let Err(err) = state.play.pool.open_backfill(&ctx.mode, &live).await {
        // Not open anywhere then: the row must not hold the match's slot.
        let _ = backfills::end(&state.db, &project_id, &id, backfills::CLOSED, now).await;
        return Err(err.into());
    }
    // A release (or an assignment timeout) changes the match's status
    // first and then closes its open request: one that ran between the
    // check above and the opening found nothing to close, so the status
    // is read again, and a request on a match no longer made is closed
    // here, the same way.
    let current = matches::get(&state.db, &project_id, &match_id).await?;
    if current.status != match_status::MADE {
        matchplane_store::released::close_backfill::<ApiError>(
            &state.db,
            state.play.pool.as_ref(),
            &ctx.mode,
            &match_id,
            now,
        )
        .await?;
        return Err(not_made(&current));
    }
    let view = view(&state, &ctx.mode, row, now).await?;
    let location = format!(
        "/v1/projects/{project_id}/matches/{match_id}/backfill/{}",
        view.backfill_id
    );
    Ok(Created(location, Json(view)))
}

async fn request(
    state: &AppState,
    project_id: &str,
    match_id: &str,
    backfill_id: &str,
) -> Result<backfill::Model, ApiError> {
    let row = backfills::get(&state.db, project_id, backfill_id).await?;
    if row.match_id != match_id {
        return Err(ApiError::not_found("no such backfill for this match"));
    }
    Ok(row)
}

/// A backfill request: its status, open seats and fills.
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}", tag = "backfill", operation_id = "getBackfill",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`"), ("backfillId" = String, Path, description = "`bf_…`")),
    responses((status = 200, body = BackfillView), (status = 404, body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id, backfill_id)): Path<(String, String, String)>,
) -> Result<Json<BackfillView>, ApiError> {
    let row = request(&state, &project_id, &match_id, &backfill_id).await?;
    let mode = ModeKey::new(&project_id, &row.game_mode);
    Ok(Json(view(&state, &mode, row, Utc::now()).await?))
}

fn not_open(status: &str) -> ApiError {
    ApiError::new(
        Code::Conflict,
        format!("the backfill is {status}, no longer open"),
    )
}

/// Replaces an open request's roster with a newer one (open seats
/// recomputed): the next fills use it.
#[utoipa::path(put, path = "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}", tag = "backfill", operation_id = "replaceBackfillRoster",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`"), ("backfillId" = String, Path, description = "`bf_…`")),
    request_body = matchplane_matchmaker::backfill::roster::Roster,
    responses(
        (status = 200, body = BackfillView),
        (status = 404, body = Problem),
        (status = 409, description = "CONFLICT: the request is filled, closed or expired", body = Problem),
        (status = 422, description = "NO_OPEN_SEATS, INVALID_ROSTER, VALIDATION_ERROR (a value in `attributes`), listed together; BACKFILL_NOT_ENABLED (the mode has no enabled `backfill` block, or is disabled); VALIDATION_ERROR on `matchId` when the match is not made", body = Problem)))]
pub async fn replace(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id, backfill_id)): Path<(String, String, String)>,
    RawJson(body): RawJson,
) -> Result<Json<BackfillView>, ApiError> {
    let (roster, untyped) = read_roster(body)?;
    let row = request(&state, &project_id, &match_id, &backfill_id).await?;
    let now = Utc::now();
    let status = backfills::status_at(&row, now);
    if status != backfills::OPEN {
        return Err(not_open(status));
    }
    let ctx = context(&state, &project_id, &match_id).await?;
    let (values, roster, seats) = check(&ctx, roster, &untyped)?;
    let left = departed(&state, &project_id, &match_id, &roster).await?;
    let live = OpenBackfill {
        backfill_id: backfill_id.as_str().into(),
        match_id: match_id.as_str().into(),
        revision: 0,
        open_seats: seats.seats.open_seats.clone(),
        opened_at: secs(row.created_at),
        expires_at: secs(row.expires_at),
        mean_mmr: seats.seats.mean_mmr,
        pings: match_players(&ctx.row)
            .into_iter()
            .filter_map(|p| p.2)
            .collect(),
        region: ctx.row.region.as_deref().map(Into::into),
        roster: values,
        open_roles: seats.roles.clone(),
    };
    match state.play.pool.replace_backfill(&ctx.mode, &live).await? {
        BackfillChange::Changed { revision } => {
            let roster = stored_roster(&roster, now, &left)?;
            let row = backfills::replace_roster(
                &state.db,
                &row,
                roster,
                (&seats.seats.open_seats, seats.roles_json()),
                revision,
                now,
            )
            .await?;
            Ok(Json(view(&state, &ctx.mode, row, now).await?))
        }
        BackfillChange::NotOpen(status) => Err(not_open(status.as_str())),
        BackfillChange::Unknown => Err(not_open(backfills::EXPIRED)),
    }
}

/// Closes a request: no fill takes its seats any more. A request a fill
/// filled first answers `409` (status `filled`); closing a closed request
/// again answers its state.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}", tag = "backfill", operation_id = "closeBackfill",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`"), ("backfillId" = String, Path, description = "`bf_…`")),
    responses(
        (status = 200, body = BackfillView),
        (status = 404, body = Problem),
        (status = 409, description = "CONFLICT: the request was filled or expired first", body = Problem)))]
pub async fn close(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id, backfill_id)): Path<(String, String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<BackfillView>, ApiError> {
    let row = request(&state, &project_id, &match_id, &backfill_id).await?;
    let now = Utc::now();
    let mode = ModeKey::new(&project_id, &row.game_mode);
    match backfills::status_at(&row, now) {
        backfills::OPEN => {}
        backfills::CLOSED => return Ok(Json(view(&state, &mode, row, now).await?)),
        other => return Err(not_open(other)),
    }
    match state.play.pool.close_backfill(&mode, &backfill_id).await? {
        BackfillChange::Changed { .. } | BackfillChange::Unknown => {
            backfills::end(&state.db, &project_id, &backfill_id, backfills::CLOSED, now).await?;
        }
        BackfillChange::NotOpen(BackfillStatus::Closed) => {}
        BackfillChange::NotOpen(status) => return Err(not_open(status.as_str())),
    }
    let row = backfills::get(&state.db, &project_id, &backfill_id).await?;
    Ok(Json(view(&state, &mode, row, now).await?))
}
