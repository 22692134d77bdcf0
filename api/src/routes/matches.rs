//! Matches (SPEC 7): `GET /v1/projects/{projectId}/matches?gameMode=&limit=&cursor=`
//! and `GET …/matches/{matchId}`. API key of the project (or the operator).
//!
//! Matches are written by the worker's outbox consumer; ids are
//! `mat_<ulid>`, so a page is newest first and its cursor is the last id.

use crate::auth::ProjectCaller;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::entities::match_;
use matchplane_store::repos::{matches, projects};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// A match as stored: the `match.made` body without its `type`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchView {
    /// `mat_…`, also the webhook's `webhook-id`.
    pub match_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The mode's config version the match was made under.
    pub game_mode_version: i64,
    /// When the match was made.
    pub created_at: DateTime<Utc>,
    /// Teams in match-shape order, as in SPEC 6's body.
    #[schema(value_type = Vec<Object>)]
    pub teams: Value,
    /// `{mmrSpread, teamImbalance}`.
    #[schema(value_type = Object)]
    pub quality: Value,
}

impl From<match_::Model> for MatchView {
    fn from(m: match_::Model) -> Self {
        Self {
            match_id: m.id,
            project_id: m.project_id,
            game_mode: m.game_mode,
            game_mode_version: m.game_mode_version,
            created_at: m.created_at,
            teams: m.teams,
            quality: m.quality,
        }
    }
}

/// Query of the matches list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct MatchesQuery {
    /// Only matches of this game mode.
    pub game_mode: Option<String>,
    /// Matches per page, 1..=200 (default 50).
    pub limit: Option<u64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// A page of matches.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchesPage {
    /// Newest first.
    pub items: Vec<MatchView>,
    /// Cursor of the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The project's matches, newest first.
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches", tag = "matches",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), MatchesQuery),
    responses((status = 200, body = MatchesPage), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn list(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    Query(query): Query<MatchesQuery>,
) -> Result<Json<MatchesPage>, ApiError> {
    let limit = super::page_limit(query.limit)?;
    if let Some(cursor) = &query.cursor {
        if !cursor.starts_with("mat_") {
            return Err(ApiError::invalid(vec![FieldError::new(
                "cursor",
                Code::ValidationError,
                "not a cursor of this list",
            )]));
        }
    }
    projects::get(&state.db, &project_id).await?;
    let rows = matches::list(
        &state.db,
        &project_id,
        query.game_mode.as_deref(),
        query.cursor.as_deref(),
        limit,
    )
    .await?;
    let next_cursor = if rows.len() as u64 == limit {
        rows.last().map(|m| m.id.clone())
    } else {
        None
    };
    Ok(Json(MatchesPage {
        items: rows.into_iter().map(MatchView::from).collect(),
        next_cursor,
    }))
}

/// One match.
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches/{matchId}", tag = "matches",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    responses((status = 200, body = MatchView), (status = 404, body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
) -> Result<Json<MatchView>, ApiError> {
    let row = matches::get(&state.db, &project_id, &match_id).await?;
    Ok(Json(row.into()))
}
