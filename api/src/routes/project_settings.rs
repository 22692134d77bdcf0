//! A project's settings (docs/acceptance.md): `GET/PATCH
//! /v1/projects/{projectId}/settings`. Today one setting,
//! `playerSearchScope`: `mode` (one live search per player per mode, the
//! default) or `project` (one per player over every mode of the project,
//! enforced by the pool's add step). The operator or an `admin` key
//! changes them; any key of the project reads them.

use crate::auth::ProjectCaller;
use crate::extract::ApiJson;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::Utc;
use matchplane_store::entities::project;
use matchplane_store::pool::PlayerSearchScope;
use matchplane_store::repos::projects;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `playerSearchScope`: where a player may hold one live search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScopeWord {
    /// One live search per player per mode (docs/searching.md): the default.
    Mode,
    /// One live search per player in the whole project: a player searching
    /// or proposed in one mode gets `409 PLAYER_ALREADY_SEARCHING` (with
    /// the live `ticketId` and its `gameMode`) in every other mode.
    Project,
}

impl From<ScopeWord> for PlayerSearchScope {
    fn from(word: ScopeWord) -> Self {
        match word {
            ScopeWord::Mode => Self::Mode,
            ScopeWord::Project => Self::Project,
        }
    }
}

impl From<PlayerSearchScope> for ScopeWord {
    fn from(scope: PlayerSearchScope) -> Self {
        match scope {
            PlayerSearchScope::Mode => Self::Mode,
            PlayerSearchScope::Project => Self::Project,
        }
    }
}

/// Body of `PATCH /v1/projects/{projectId}/settings`: only the fields
/// given change.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"playerSearchScope": "project"}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSettings {
    /// New `playerSearchScope`; in force for searches started from now on
    /// (live searches stay).
    #[serde(default)]
    pub player_search_scope: Option<ScopeWord>,
}

/// A project's settings as answered.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"playerSearchScope": "mode"}))]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// `mode` (default) or `project`.
    pub player_search_scope: ScopeWord,
}

impl From<&project::Model> for SettingsView {
    fn from(p: &project::Model) -> Self {
        Self {
            player_search_scope: projects::player_search_scope(p).into(),
        }
    }
}

/// A project's settings (operator, or any key of the project).
#[utoipa::path(get, path = "/v1/projects/{projectId}/settings", tag = "projects", operation_id = "getProjectSettings", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 200, body = SettingsView), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
) -> Result<Json<SettingsView>, ApiError> {
    let project = projects::get(&state.db, &project_id).await?;
    Ok(Json(SettingsView::from(&project)))
}

/// Changes a project's settings (operator, or an `admin` key of the
/// project). A new `playerSearchScope` holds for searches started after
/// the answer on this instance, within a second on the others.
#[utoipa::path(patch, path = "/v1/projects/{projectId}/settings", tag = "projects", operation_id = "updateProjectSettings", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body = UpdateSettings,
    responses((status = 200, body = SettingsView), (status = 401, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn update(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    ApiJson(body): ApiJson<UpdateSettings>,
) -> Result<Json<SettingsView>, ApiError> {
    let project = match body.player_search_scope {
        Some(word) => {
            let updated =
                projects::set_player_search_scope(&state.db, &project_id, word.into(), Utc::now())
                    .await?;
            // The scope is cached with the project's quotas.
            state.play.cache.quotas_written();
            tracing::info!(project_id = %project_id, scope = ?word, "project settings changed");
            updated
        }
        None => projects::get(&state.db, &project_id).await?,
    };
    Ok(Json(SettingsView::from(&project)))
}
