//! A project's one webhook endpoint (docs/webhooks.md, "One endpoint for
//! every mode of a project"): `GET/PUT/DELETE
//! /v1/projects/{projectId}/webhook` and `POST …/webhook/rotate-secret`.
//! Every mode with `webhook.useProjectEndpoint` delivers there, signed with
//! the endpoint's own `whsec_` secret; the body's `gameMode` tells the modes
//! apart. Writes need an `admin` key (or the operator); any key of the
//! project reads it, its secret masked.
//!
//! The URL is checked as a mode's is (`webhook/src/ssrf.rs`, at the write
//! and again at every delivery); the secret rotates as a mode's does
//! (docs/webhook-secret-rotation.md). Nothing here is cached: the worker
//! reads the endpoint at every attempt, so a change holds from the next one.

use super::created::Created;
use crate::auth::ProjectCaller;
use crate::credentials::{self, MASKED_SECRET};
use crate::extract::{parse_value, RawJson};
use crate::problem::{ApiError, Problem};
use crate::routes::webhook_status::WebhookStatus;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::validation::MAX_WEBHOOK_URL_BYTES;
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::entities::project_webhook;
use matchplane_store::repos::project_webhooks::{self, Endpoint, HEALTH_KEY};
use matchplane_store::repos::{projects, webhook_health, StoreError};
use matchplane_webhook::EventType;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Members of the endpoint's answer the server sets: a `GET` answer sent
/// back as the `PUT` body carries them, and they are ignored, as a game
/// mode's are (docs/webhooks.md, "One endpoint for every mode of a
/// project"; the request schema lists them, `openapi/sent_back.rs`).
pub const SERVER_SET: [&str; 4] = ["secret", "status", "createdAt", "updatedAt"];

/// Body of `PUT /v1/projects/{projectId}/webhook`. The endpoint's `GET`
/// answer may be sent back as it: the members the server sets (`secret`,
/// `status`, `createdAt`, `updatedAt`) are ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"url": "https://game.example.com/hooks/matchplane", "enabled": true,
    "eventTypes": ["match.made", "match.backfilled"]}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutProjectWebhook {
    /// `https://` URL whose host resolves only to public addresses, at most
    /// 2 048 bytes (the rules of a mode's `webhook.url`).
    #[schema(max_length = 2048)]
    pub url: String,
    /// Whether events are sent; default `true`.
    #[serde(default, deserialize_with = "matchplane_matchmaker::config::present")]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// The event types sent (`match.made`, `match.backfilled`,
    /// `webhook.test`); absent: every type. Events of other types are not
    /// queued for the modes on this endpoint.
    #[serde(default, deserialize_with = "matchplane_matchmaker::config::present")]
    #[schema(nullable = false, value_type = Option<Vec<EventType>>)]
    pub event_types: Option<Vec<String>>,
}

/// A project's webhook endpoint as answered.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"url": "https://game.example.com/hooks/matchplane", "enabled": true,
    "eventTypes": ["match.made"], "secret": "whsec_********",
    "status": {"failing": false, "since": null, "lastError": null, "consecutiveFailures": 0,
        "lastFailureAt": null, "lastSuccessAt": "2026-12-01T09:58:02.000Z"},
    "createdAt": "2026-12-01T09:00:00.000Z", "updatedAt": "2026-12-01T09:00:00.000Z"}))]
#[serde(rename_all = "camelCase")]
pub struct ProjectWebhookView {
    /// Destination URL.
    pub url: String,
    /// Whether events are sent.
    pub enabled: bool,
    /// The event types sent: those set, or every type (each listed) when
    /// none were.
    #[schema(value_type = Vec<EventType>)]
    pub event_types: Vec<String>,
    /// `whsec_` + base64 of 32 random bytes: in full when the endpoint is
    /// created and on a rotation, `whsec_********` elsewhere.
    pub secret: String,
    /// Whether deliveries to the endpoint are failing (every mode's on it).
    pub status: WebhookStatus,
    /// When the endpoint was first set (RFC 3339, UTC, milliseconds).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
    /// When it last changed, a rotation included.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: DateTime<Utc>,
}

async fn view(
    state: &AppState,
    row: &project_webhook::Model,
    show_secret: bool,
) -> Result<ProjectWebhookView, ApiError> {
    let health = webhook_health::get(&state.db, &row.project_id, HEALTH_KEY).await?;
    Ok(ProjectWebhookView {
        url: row.url.clone(),
        enabled: row.enabled,
        event_types: project_webhooks::event_types(row).unwrap_or_else(|| {
            EventType::ALL
                .iter()
                .map(|t| t.as_str().to_owned())
                .collect()
        }),
        secret: if show_secret {
            row.webhook_secret.clone()
        } else {
            MASKED_SECRET.to_owned()
        },
        status: WebhookStatus::from_health(health.as_ref()),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

fn no_endpoint() -> ApiError {
    ApiError::not_found("the project has no webhook endpoint")
}

fn endpoint_error(err: StoreError) -> ApiError {
    match err {
        StoreError::NotFound => no_endpoint(),
        other => other.into(),
    }
}

/// Every failed rule of `body`, at once: the URL's length and safety, and
/// each event type a known one. The endpoint's URL as stored (`kept`) is
/// not refused for a rule added after it was stored (see
/// `matchplane_webhook::check_changed_webhook_url`).
async fn check(state: &AppState, body: &PutProjectWebhook, kept: Option<&str>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if body.url.trim().is_empty() {
        errors.push(FieldError::new(
            "url",
            Code::InvalidWebhookUrl,
            "url is empty",
        ));
    } else if body.url.len() > MAX_WEBHOOK_URL_BYTES {
        errors.push(FieldError::new(
            "url",
            Code::InvalidWebhookUrl,
            format!(
                "url is {} bytes; at most {MAX_WEBHOOK_URL_BYTES}",
                body.url.len()
            ),
        ));
    } else if let Err(why) = matchplane_webhook::check_changed_webhook_url(
        &body.url,
        kept,
        state.config.allow_private_webhooks,
    )
    .await
    {
        errors.push(FieldError::new(
            "url",
            Code::InvalidWebhookUrl,
            why.to_string(),
        ));
    }
    if body.event_types.as_ref().is_some_and(Vec::is_empty) {
        // Nothing would ever be sent while the endpoint says it is on.
        errors.push(FieldError::new(
            "eventTypes",
            Code::ValidationError,
            "list at least one event type, leave eventTypes out for every type, \
             or set enabled to false",
        ));
    }
    let types = body.event_types.as_deref().unwrap_or_default();
    for (i, name) in types.iter().enumerate() {
        if types[..i].contains(name) {
            errors.push(FieldError::new(
                format!("eventTypes[{i}]"),
                Code::ValidationError,
                format!("`{name}` is listed twice"),
            ));
        } else if EventType::parse(name).is_none() {
            let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
            errors.push(FieldError::new(
                format!("eventTypes[{i}]"),
                Code::ValidationError,
                format!("`{name}` is not an event type; one of {}", known.join(", ")),
            ));
        }
    }
    errors
}

/// The project's webhook endpoint, its secret masked, with its delivery
/// health (`status`).
#[utoipa::path(get, path = "/v1/projects/{projectId}/webhook", tag = "projects", operation_id = "getProjectWebhook",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 200, body = ProjectWebhookView), (status = 401, body = Problem),
        (status = 404, description = "No such project, or it has no endpoint", body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
) -> Result<Json<ProjectWebhookView>, ApiError> {
    let row = project_webhooks::get(&state.db, &project_id)
        .await
        .map_err(endpoint_error)?;
    Ok(Json(view(&state, &row, false).await?))
}

/// Sets the project's webhook endpoint: creates it with a new secret
/// (`201`, the secret shown this once) or changes its URL, `enabled` and
/// `eventTypes` (`200`, the secret kept and masked). Every mode with
/// `webhook.useProjectEndpoint` delivers there from its next attempt.
#[utoipa::path(put, path = "/v1/projects/{projectId}/webhook", tag = "projects", operation_id = "putProjectWebhook",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body = PutProjectWebhook,
    responses(
        (status = 200, description = "Changed", body = ProjectWebhookView),
        (status = 201, description = "Created; the secret is shown", body = ProjectWebhookView,
            headers(("Location" = String, description = "`/v1/projects/{projectId}/webhook`"))),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 401, body = Problem),
        (status = 404, description = "No such project", body = Problem),
        (status = 422, description = "Every failed rule in `errors` (`INVALID_WEBHOOK_URL` on `url`, an unknown or repeated `eventTypes[i]`, an empty `eventTypes`)", body = Problem)))]
pub async fn put(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    RawJson(mut body): RawJson,
) -> Result<Response, ApiError> {
    if let Value::Object(members) = &mut body {
        for member in SERVER_SET {
            members.remove(member);
        }
    }
    let body: PutProjectWebhook = parse_value(body)?;
    projects::get(&state.db, &project_id).await?;
    let stored = match project_webhooks::get(&state.db, &project_id).await {
        Ok(row) => Some(row.url),
        Err(StoreError::NotFound) => None,
        Err(other) => return Err(other.into()),
    };
    let errors = check(&state, &body, stored.as_deref()).await;
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let secret = credentials::webhook_secret(&mut rand::rngs::OsRng);
    let endpoint = Endpoint {
        url: body.url,
        enabled: body.enabled.unwrap_or(true),
        event_types: body.event_types,
    };
    let (row, created) =
        project_webhooks::put(&state.db, &project_id, endpoint, &secret, Utc::now()).await?;
    tracing::info!(project_id = %project_id, created, "project webhook endpoint set");
    let answer = Json(view(&state, &row, created).await?);
    Ok(if created {
        Created(format!("/v1/projects/{project_id}/webhook"), answer).into_response()
    } else {
        answer.into_response()
    })
}

/// Deletes the project's webhook endpoint. Modes with
/// `webhook.useProjectEndpoint` queue no webhook until one is set again;
/// deliveries already queued for it end unsent at their next attempt.
#[utoipa::path(delete, path = "/v1/projects/{projectId}/webhook", tag = "projects", operation_id = "deleteProjectWebhook",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 204, description = "Deleted"), (status = 401, body = Problem),
        (status = 404, description = "No such project, or it has no endpoint", body = Problem)))]
pub async fn delete(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    _: crate::extract::NoBody,
) -> Result<StatusCode, ApiError> {
    project_webhooks::delete(&state.db, &project_id)
        .await
        .map_err(endpoint_error)?;
    tracing::info!(project_id = %project_id, "project webhook endpoint deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// Rotates the endpoint's secret; the answer shows the new one. Every
/// secret rotated out keeps signing for 24 hours from its own rotation, as
/// a mode's does (docs/webhook-secret-rotation.md).
#[utoipa::path(post, path = "/v1/projects/{projectId}/webhook/rotate-secret", tag = "projects", operation_id = "rotateProjectWebhookSecret",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 200, body = ProjectWebhookView), (status = 401, body = Problem),
        (status = 404, description = "No such project, or it has no endpoint", body = Problem),
        (status = 409, description = "A concurrent rotation got there first", body = Problem)))]
pub async fn rotate_secret(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    _: crate::extract::NoBody,
) -> Result<Json<ProjectWebhookView>, ApiError> {
    let secret = credentials::webhook_secret(&mut rand::rngs::OsRng);
    let row = project_webhooks::rotate_secret(&state.db, &project_id, &secret, Utc::now())
        .await
        .map_err(endpoint_error)?;
    tracing::info!(project_id = %project_id, "project webhook secret rotated");
    Ok(Json(view(&state, &row, true).await?))
}
