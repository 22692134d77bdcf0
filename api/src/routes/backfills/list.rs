//! `GET /v1/projects/{projectId}/matches/{matchId}/backfill`: the match's
//! backfill requests, newest first (docs/backfill.md), so that a studio
//! finds an open request's id without keeping it.

use super::{view, BackfillView};
use crate::auth::ProjectCaller;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::Utc;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::{backfills, matches};

/// The match's backfill requests, newest first (at most 100): each as
/// `GET …/backfill/{backfillId}` shows it. An empty list for a match that
/// never had one.
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches/{matchId}/backfill", tag = "backfill", operation_id = "listBackfills",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    responses((status = 200, body = [BackfillView]), (status = 404, description = "NOT_FOUND: no such match", body = Problem)))]
pub async fn list(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
) -> Result<Json<Vec<BackfillView>>, ApiError> {
    let row = matches::get(&state.db, &project_id, &match_id).await?;
    let mode = ModeKey::new(&project_id, &row.game_mode);
    let now = Utc::now();
    let mut views = Vec::new();
    for request in backfills::of_match(&state.db, &project_id, &match_id).await? {
        views.push(view(&state, &mode, request, now).await?);
    }
    Ok(Json(views))
}
