//! Held matching (docs/game-modes.md, "Holding matching"): `POST` and `DELETE
//! /v1/projects/{projectId}/game-modes/{name}/hold`, an `admin` or
//! `backend` key (the game's servers are full: a backend holds the mode
//! and releases it when it has room again).
//!
//! A hold is the mode's live state, not its config: neither call changes
//! the mode's version, `updatedAt` or history. Both are idempotent: a
//! `POST` on a held mode keeps its first `since` and `by`, a `DELETE` on a
//! mode not held is `204` too. The worker reads the hold at every cycle
//! (`worker/src/tick.rs`); the mode view and its stats show it as `hold`.

use crate::auth::{Caller, ProjectCaller};
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_store::repos::{api_keys, mode_holds};
use serde::Serialize;
use utoipa::ToSchema;

/// A mode's hold, as the mode view and its stats show it (`hold`, `null`
/// when the mode is not held).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"since": "2026-12-01T10:00:00.000Z", "by": "game-backend"}))]
pub struct ModeHold {
    /// When the hold was set.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub since: DateTime<Utc>,
    /// Who set it: the API key's name (its id if it had none), or
    /// `operator`.
    pub by: String,
}

impl From<mode_holds::Hold> for ModeHold {
    fn from(hold: mode_holds::Hold) -> Self {
        ModeHold {
            since: hold.since,
            by: hold.by,
        }
    }
}

/// The `hold` member of a mode row's view: the hold as JSON, or `null`.
pub fn hold_value(row: &matchplane_store::entities::game_mode::Model) -> serde_json::Value {
    mode_holds::Hold::of(row)
        .map(ModeHold::from)
        .and_then(|h| serde_json::to_value(h).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// Who a hold names: the key's name, or its id; `operator`.
async fn holder(state: &AppState, caller: &ProjectCaller) -> Result<String, ApiError> {
    match &caller.caller {
        Caller::Operator => Ok("operator".to_owned()),
        Caller::Key { key_id, .. } => {
            let keys = api_keys::list(&state.db, &caller.project_id).await?;
            Ok(keys
                .into_iter()
                .find(|k| k.id == *key_id)
                .map(|k| k.name)
                .filter(|name| !name.is_empty())
                .unwrap_or_else(|| key_id.clone()))
        }
    }
}

/// Holds the mode's matching: from its next cycle on it forms no new
/// matches and no proposals; searches keep waiting with `waitingReason`
/// `MATCHING_HELD` (nobody fails for it), open backfills are still filled
/// and answers to open proposals still count. Idempotent: a held mode
/// keeps its first `since` and `by`. The answer is the hold in force.
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes/{name}/hold", tag = "game-modes", operation_id = "holdGameMode",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = ModeHold), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn hold(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<ModeHold>, ApiError> {
    let by = holder(&state, &caller).await?;
    let hold = mode_holds::hold(&state.db, &project_id, &name, &by, Utc::now())
        .await
        .map_err(super::mode_error(&name))?;
    tracing::info!(project_id = %project_id, game_mode = %name, by = %hold.by, "game mode held");
    Ok(Json(hold.into()))
}

/// Releases the mode's hold: its next cycle matches as usual (the waits,
/// and so the ranges, kept growing meanwhile). `204` also when the mode
/// was not held.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/game-modes/{name}/hold", tag = "game-modes", operation_id = "releaseGameModeHold",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 204, description = "Not held (any more)"), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn release(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<StatusCode, ApiError> {
    mode_holds::release(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    tracing::info!(project_id = %project_id, game_mode = %name, "game mode hold released");
    Ok(StatusCode::NO_CONTENT)
}
