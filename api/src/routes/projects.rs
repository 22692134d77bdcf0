//! Projects (docs/api-keys.md, docs/api-tour.md): `POST/GET /v1/projects`,
//! `GET/PATCH/DELETE /v1/projects/{projectId}`. The operator manages them;
//! a key may read its own project.

use super::created::Created;
use crate::auth::{Caller, Operator, ProjectCaller, ProjectOperator};
use crate::extract::ApiJson;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::entities::project;
use matchplane_store::repos::projects;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Longest project name (characters).
pub const MAX_NAME_CHARS: usize = 200;

/// Body of `POST /v1/projects`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"name": "Studio", "tier": "pro"}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateProject {
    /// Display name, 1..=200 characters.
    #[schema(
        pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$",
        min_length = 1,
        max_length = 200
    )]
    pub name: String,
    /// Tier name; `free` when absent.
    #[serde(default)]
    pub tier: Option<String>,
}

/// Body of `PATCH /v1/projects/{projectId}`: only the fields given change.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"tier": "pro"}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateProject {
    /// New display name.
    #[serde(default)]
    #[schema(
        pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$",
        min_length = 1,
        max_length = 200
    )]
    pub name: Option<String>,
    /// New tier name; game modes are validated against it from now on.
    #[serde(default)]
    pub tier: Option<String>,
}

/// A project as answered.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9", "name": "Studio", "tier": "pro", "createdAt": "2026-12-01T10:00:00.000Z", "updatedAt": "2026-12-01T10:00:00.000Z"}))]
#[serde(rename_all = "camelCase")]
pub struct ProjectView {
    /// `prj_<ulid>`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Tier name.
    pub tier: String,
    /// Creation time.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub updated_at: DateTime<Utc>,
}

impl From<project::Model> for ProjectView {
    fn from(p: project::Model) -> Self {
        Self {
            id: p.id,
            name: p.name,
            tier: p.tier,
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

fn check_name(name: &str) -> Result<(), ApiError> {
    if !matchplane_matchmaker::ticket::is_printable_text(name, MAX_NAME_CHARS) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "name",
            Code::ValidationError,
            format!("name must be 1 to {MAX_NAME_CHARS} printable characters"),
        )]));
    }
    Ok(())
}

/// Creates a project (operator).
#[utoipa::path(post, path = "/v1/projects", tag = "projects", operation_id = "createProject", security(("bearer" = [])),
    request_body = CreateProject,
    responses((status = 201, body = ProjectView, headers(("Location" = String, description = "`/v1/projects/{projectId}`"))),
        (status = 401, body = Problem), (status = 422, body = Problem)))]
pub async fn create(
    _operator: Operator,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CreateProject>,
) -> Result<Created<Json<ProjectView>>, ApiError> {
    check_name(&body.name)?;
    let tier = body
        .tier
        .as_deref()
        .unwrap_or(matchplane_matchmaker::tier::DEFAULT_TIER);
    let created = projects::create(&state.db, body.name.trim(), tier, Utc::now()).await?;
    tracing::info!(project_id = %created.id, tier, "project created");
    Ok(Created(
        format!("/v1/projects/{}", created.id),
        Json(created.into()),
    ))
}

/// Every project (operator).
#[utoipa::path(get, path = "/v1/projects", tag = "projects", operation_id = "listProjects", security(("bearer" = [])),
    responses((status = 200, body = [ProjectView]), (status = 401, body = Problem)))]
pub async fn list(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Vec<ProjectView>>, ApiError> {
    caller.require_operator()?;
    let all = projects::list(&state.db).await?;
    Ok(Json(all.into_iter().map(ProjectView::from).collect()))
}

/// One project (operator, or a key of this project).
#[utoipa::path(get, path = "/v1/projects/{projectId}", tag = "projects", operation_id = "getProject", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 200, body = ProjectView), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
) -> Result<Json<ProjectView>, ApiError> {
    Ok(Json(projects::get(&state.db, &project_id).await?.into()))
}

/// Renames a project or moves it to another tier (operator).
#[utoipa::path(patch, path = "/v1/projects/{projectId}", tag = "projects", operation_id = "updateProject", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body = UpdateProject,
    responses((status = 200, body = ProjectView), (status = 401, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn update(
    _operator: ProjectOperator,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    ApiJson(body): ApiJson<UpdateProject>,
) -> Result<Json<ProjectView>, ApiError> {
    if let Some(name) = body.name.as_deref() {
        check_name(name)?;
    }
    let updated = projects::update(
        &state.db,
        &project_id,
        body.name.as_deref().map(str::trim),
        body.tier.as_deref(),
        Utc::now(),
    )
    .await?;
    // The tier's rate limit and quotas, cached with its keys.
    state.keys.written();
    state.play.cache.quotas_written();
    Ok(Json(updated.into()))
}

/// Deletes a project with its keys, game modes, matches and deliveries (operator).
#[utoipa::path(delete, path = "/v1/projects/{projectId}", tag = "projects", operation_id = "deleteProject", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 204, description = "Deleted"), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn delete(
    _operator: ProjectOperator,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    _: crate::extract::NoBody,
) -> Result<StatusCode, ApiError> {
    projects::delete(&state.db, &project_id).await?;
    state.keys.written();
    state.play.cache.modes_written();
    state.play.cache.quotas_written();
    tracing::info!(project_id = %project_id, "project deleted");
    // Its searches fail at the worker's next sweep (within a second).
    Ok(StatusCode::NO_CONTENT)
}
