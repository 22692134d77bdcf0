//! API keys (docs/api-keys.md, docs/api-tour.md): `POST/GET /v1/projects/{projectId}/keys`,
//! `DELETE /v1/projects/{projectId}/keys/{keyId}`. The operator, or a key
//! of the same project. The key is in the create answer only.
//!
//! Keys carry `scopes` ([`crate::scopes`]): creating and revoking keys
//! needs `admin`. A key the operator makes is `["admin"]` unless the body
//! says otherwise, a key an admin key makes `["backend"]`; a body may name
//! `scopes` explicitly (an admin key may make admin keys).

use super::created::Created;
use crate::auth::ProjectCaller;
use crate::credentials;
use crate::extract::ApiJson;
use crate::problem::{ApiError, Problem};
use crate::scopes::{Scope, Scopes};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::entities::api_key;
use matchplane_store::repos::{api_keys, projects};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Longest key label (characters).
pub const MAX_LABEL_CHARS: usize = 100;

/// Body of `POST …/keys` (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = json!({"name": "backend-prod"}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateKey {
    /// A label to recognise the key by, e.g. `backend-prod`.
    #[serde(default)]
    #[schema(
        pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$",
        min_length = 1,
        max_length = 100
    )]
    pub name: Option<String>,
    /// What the key may do: any of `admin`, `backend` and `read`
    /// (docs/api-keys.md), e.g. `["backend"]`. Default:
    /// `["admin"]` when the operator creates it, `["backend"]` when a key
    /// does.
    #[serde(default)]
    pub scopes: Option<Vec<Scope>>,
}

/// A key as listed: never the key itself.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "key_01JDZ8K3C4D5E6F7G8H9J0K1M2", "name": "backend-prod", "prefix": "mp_sk_Ab12Cd", "createdAt": "2026-12-01T10:00:00.000Z", "lastUsedAt": null, "revokedAt": null, "scopes": ["backend"]}))]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    /// `key_<ulid>`.
    pub id: String,
    /// Label.
    pub name: String,
    /// First characters of the key, e.g. `mp_sk_Ab12Cd`.
    pub prefix: String,
    /// What the key may do (`admin` first).
    pub scopes: Vec<Scope>,
    /// Creation time.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// Last authenticated request (to within a few seconds).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub last_used_at: Option<DateTime<Utc>>,
    /// Revocation time, if revoked.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The answer to a key creation: the only time `key` is ever shown.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "key_01JDZ8K3C4D5E6F7G8H9J0K1M2", "name": "backend-prod", "prefix": "mp_sk_Ab12Cd", "createdAt": "2026-12-01T10:00:00.000Z", "lastUsedAt": null, "revokedAt": null, "scopes": ["backend"], "key": "mp_sk_Ab12Cd3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX3yZ4aB5c"}))]
#[serde(rename_all = "camelCase")]
pub struct CreatedKey {
    /// The key's metadata.
    #[serde(flatten)]
    pub view: KeyView,
    /// The whole key, `mp_sk_…`; store it now, it cannot be shown again.
    pub key: String,
}

impl From<api_key::Model> for KeyView {
    fn from(k: api_key::Model) -> Self {
        Self {
            id: k.id,
            name: k.name,
            scopes: Scopes::parse_stored(&k.scopes).list(),
            prefix: k.prefix,
            created_at: k.created_at,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        }
    }
}

/// Creates a key for the project; the answer carries the key once.
#[utoipa::path(post, path = "/v1/projects/{projectId}/keys", tag = "keys", operation_id = "createKey", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body(content = Option<CreateKey>, description = "Optional label"),
    responses((status = 201, body = CreatedKey, headers(("Location" = String, description = "`/v1/projects/{projectId}/keys/{keyId}` (its `DELETE` revokes it)"))),
        (status = 401, body = Problem),
        (status = 403, description = "FORBIDDEN: the calling key is not `admin`", body = Problem),
        (status = 404, body = Problem),
        (status = 422, description = "VALIDATION_ERROR on `name` (1 to 100 printable characters) or `scopes`", body = Problem)))]
pub async fn create(
    caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    body: Option<ApiJson<CreateKey>>,
) -> Result<Created<Json<CreatedKey>>, ApiError> {
    let body = body.map(|ApiJson(b)| b).unwrap_or_default();
    let name = body.name.unwrap_or_else(|| "default".to_owned());
    if !matchplane_matchmaker::ticket::is_printable_text(&name, MAX_LABEL_CHARS) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "name",
            Code::ValidationError,
            format!("name must be 1 to {MAX_LABEL_CHARS} printable characters"),
        )]));
    }
    let scopes = scopes_of(&caller, body.scopes.as_deref())?;
    projects::get(&state.db, &project_id).await?;
    let generated = credentials::generate(&mut rand::rngs::OsRng);
    let stored = api_keys::create(
        &state.db,
        &project_id,
        api_keys::NewKey {
            name: &name,
            prefix: &generated.prefix,
            hash: &generated.hash,
            scopes: &scopes.stored(),
        },
        Utc::now(),
    )
    .await?;
    tracing::info!(project_id = %project_id, key_id = %stored.id, "api key created");
    Ok(Created(
        format!("/v1/projects/{project_id}/keys/{}", stored.id),
        Json(CreatedKey {
            view: stored.into(),
            key: generated.plaintext,
        }),
    ))
}

/// The scopes of a new key: `asked`, or the default for who creates it.
///
/// # Errors
/// `422 VALIDATION_ERROR` on `scopes` for an empty list; `403 FORBIDDEN`
/// for a scope the creating key does not hold itself.
fn scopes_of(caller: &ProjectCaller, asked: Option<&[Scope]>) -> Result<Scopes, ApiError> {
    let Some(asked) = asked else {
        return Ok(match caller.caller {
            crate::auth::Caller::Operator => Scopes::ADMIN,
            crate::auth::Caller::Key { .. } => Scopes::BACKEND,
        });
    };
    let scopes = Scopes::of(asked);
    if scopes.is_empty() {
        return Err(ApiError::invalid(vec![FieldError::new(
            "scopes",
            Code::ValidationError,
            "scopes lists at least one of `admin`, `backend`, `read`",
        )]));
    }
    for scope in scopes.list() {
        caller.caller.require_scope(scope)?;
    }
    Ok(scopes)
}

/// The project's keys, revoked ones included; never the keys themselves.
#[utoipa::path(get, path = "/v1/projects/{projectId}/keys", tag = "keys", operation_id = "listKeys", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 200, body = [KeyView]), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn list(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
) -> Result<Json<Vec<KeyView>>, ApiError> {
    projects::get(&state.db, &project_id).await?;
    let keys = api_keys::list(&state.db, &project_id).await?;
    Ok(Json(keys.into_iter().map(KeyView::from).collect()))
}

/// Revokes a key: it stops authenticating at once.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/keys/{keyId}", tag = "keys", operation_id = "revokeKey", security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("keyId" = String, Path, description = "`key_…`")),
    responses((status = 204, description = "Revoked"), (status = 401, body = Problem),
        (status = 403, description = "FORBIDDEN: the calling key is not `admin`", body = Problem),
        (status = 404, body = Problem)))]
pub async fn revoke(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, key_id)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<StatusCode, ApiError> {
    let revoked = api_keys::revoke(&state.db, &project_id, &key_id, Utc::now()).await?;
    state.keys.revoked(&revoked.hash).await;
    tracing::info!(project_id = %project_id, key_id = %key_id, "api key revoked");
    Ok(StatusCode::NO_CONTENT)
}
