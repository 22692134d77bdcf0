//! A game mode's end and its history: the delete (which ends the mode's
//! searches and open proposals before it answers, docs/game-modes.md) and
//! the list of its versions.

use crate::auth::ProjectCaller;
use crate::preconditions::Preconditions;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::Code;
use matchplane_store::entities::game_mode_version;
use matchplane_store::pool::{EndOutcome, ModeKey};
use matchplane_store::repos::{game_modes, StoreError};
use matchplane_store::tickets::end_mode;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// One version of a game mode's history.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"version": 1, "config": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}}, "createdAt": "2026-12-01T10:00:00.000Z"}))]
#[serde(rename_all = "camelCase")]
pub struct GameModeVersionView {
    /// Version number.
    pub version: i64,
    /// The game mode body at that version.
    #[schema(value_type = matchplane_matchmaker::GameModeConfig)]
    pub config: Value,
    /// When it was committed.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
}

impl From<game_mode_version::Model> for GameModeVersionView {
    fn from(v: game_mode_version::Model) -> Self {
        Self {
            version: v.version,
            config: v.config,
            created_at: v.created_at,
        }
    }
}

/// Store calls in flight at once while a deleted mode's searches end.
const END_CONCURRENCY: usize = 32;

/// Deletes a game mode and its history.
///
/// Its open proposals are cancelled (nobody is cooled down), its
/// searches end `failed` `GAME_MODE_DISABLED` and its matches waiting for
/// their assignment are `released` before the answer.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/game-modes/{name}", tag = "game-modes", operation_id = "deleteGameMode",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 204, description = "Deleted"), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 412, description = "VERSION_MISMATCH: `If-Match` names another version than the mode's (checked in the delete's transaction)", body = Problem)))]
pub async fn delete(
    _caller: ProjectCaller,
    preconditions: Preconditions,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<StatusCode, ApiError> {
    // A mode that does not exist is answered before the pool store is
    // touched: a refused request leaves no state behind.
    let deleted = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    // `If-Match` (docs/config-as-code.md): only the version it names is
    // deleted, also when a write lands between this read and the delete.
    preconditions.check(Some(deleted.version), &Value::Null)?;
    let only_at = preconditions.any().then_some(deleted.version);
    // Every search of the mode listed first: the sweep that fails a deleted
    // mode's searches finds them through that list, and an API process
    // that died between an add's steps may have left one out of it.
    let mode = ModeKey::new(&project_id, &name);
    if let Err(error) = state.play.pool.recount(&mode).await {
        tracing::warn!(%error, project_id = %project_id, game_mode = %name,
            "the mode's searches were not counted again before its deletion");
    }
    game_modes::delete_at(&state.db, &project_id, &name, only_at)
        .await
        .map_err(|e| match e {
            StoreError::Conflict => ApiError::version_mismatch(
                "the game mode changed while this delete ran; read it again",
            ),
            other => super::mode_error(&name)(other),
        })?;
    state.play.cache.modes_written();
    // Its open backfill requests close now: a mode created again under
    // the name is a new mode, whose cycle must not fill them.
    let closed = matchplane_store::released::close_mode_backfills::<ApiError>(
        &state.db,
        state.play.pool.as_ref(),
        &mode,
        chrono::Utc::now(),
    )
    .await;
    if let Err(error) = closed {
        tracing::warn!(?error, project_id = %project_id, game_mode = %name,
            "game mode deleted; its open backfill requests are left to expire");
    }
    // Its matches waiting for their assignment are released: nobody will
    // assign them, and no worker times them out any more (a mode created
    // again under the name would, pulling their players into it).
    if deleted
        .config
        .get("assignment")
        .is_some_and(|a| a.is_object())
    {
        let released = matchplane_store::released::release_waiting_matches::<ApiError>(
            &state.db,
            state.play.pool.as_ref(),
            (&mode, deleted.created_at),
            chrono::Utc::now(),
        )
        .await;
        match released {
            Ok(n) => metrics::with_local_recorder(&*state.recorder, || {
                metrics::counter!(crate::routes::match_lifecycle::RELEASES, "status" => "released")
                    .increment(n as u64);
            }),
            Err(error) => tracing::warn!(?error, project_id = %project_id, game_mode = %name,
                "game mode deleted; its matches waiting for an assignment were not all released"),
        }
    }
    // Its open proposals and searches end now, so that a mode created
    // again under the name starts empty (docs/game-modes.md, on a
    // deleted mode); a store that fails here leaves them to the
    // worker's sweep, within a second, as one a stale replica adds later.
    let ended = end_mode(
        state.play.pool.as_ref(),
        &mode,
        "the game mode was deleted",
        crate::play::unix_now(),
        END_CONCURRENCY,
    )
    .await;
    match ended {
        Ok(ended) => {
            // Counted as the sweep counts the ends it makes
            // (docs/operations.md, 'Metrics').
            state.play.ends.ended_many(
                &EndOutcome::Failed {
                    code: Code::GameModeDisabled.as_str().to_owned(),
                    message: String::new(),
                },
                ended,
            );
            tracing::info!(project_id = %project_id, game_mode = %name, ended,
                "game mode deleted");
        }
        Err(error) => tracing::warn!(%error, project_id = %project_id, game_mode = %name,
            "game mode deleted; its searches are left to the worker's sweep"),
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Every version the game mode had, oldest first.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/versions", tag = "game-modes", operation_id = "listGameModeVersions",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = [GameModeVersionView]), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn versions(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
) -> Result<Json<Vec<GameModeVersionView>>, ApiError> {
    let all = game_modes::versions(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    Ok(Json(
        all.into_iter().map(GameModeVersionView::from).collect(),
    ))
}
