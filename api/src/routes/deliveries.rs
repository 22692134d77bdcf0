//! Webhook deliveries (docs/webhooks.md): a match's, `GET …/matches/{matchId}/deliveries`
//! (every attempt logged) and `POST …/matches/{matchId}/deliveries/redeliver`
//! (queued again from now; a worker sends it); and a game mode's, `GET
//! …/game-modes/{name}/deliveries`, which also lists the `webhook.test`
//! events sent (they belong to no match). API key of the project.

use crate::auth::ProjectCaller;
use crate::extract::ApiQuery;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::entities::{webhook_attempt, webhook_delivery};
use matchplane_store::repos::{deliveries, game_modes, matches};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// One logged attempt.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"attemptedAt": "2026-12-01T10:00:00.000Z", "statusCode": 200, "latencyMs": 42, "error": null, "responseBody": "ok"}))]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    /// When it was sent (its unix seconds were the `webhook-timestamp`).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub attempted_at: DateTime<Utc>,
    /// The HTTP status answered; absent on a timeout or connection error.
    pub status_code: Option<i32>,
    /// Time to the answer (milliseconds).
    pub latency_ms: i64,
    /// Why no answer came, if none did.
    pub error: Option<String>,
    /// The first 1 KiB of the answer's body.
    pub response_body: Option<String>,
}

impl From<webhook_attempt::Model> for AttemptView {
    fn from(a: webhook_attempt::Model) -> Self {
        Self {
            attempted_at: a.attempted_at,
            status_code: a.status_code,
            latency_ms: a.latency_ms,
            error: a.error,
            response_body: a.response_body,
        }
    }
}

/// One delivery with its attempts.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "dlv_01JDZ8MB3C4D5E6F7G8H9J0K1M", "eventType": "match.made", "matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0", "status": "succeeded", "attemptCount": 1, "nextAttemptAt": null, "createdAt": "2026-12-01T10:00:00.000Z", "attempts": [{"attemptedAt": "2026-12-01T10:00:00.000Z", "statusCode": 200, "latencyMs": 42, "error": null, "responseBody": "ok"}]}))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    /// `dlv_…`.
    pub id: String,
    /// `match.made`, `match.backfilled` or `webhook.test`.
    pub event_type: String,
    /// The match delivered (absent for `webhook.test`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    /// Attempts made so far, every run counted (a redelivery counts on): the
    /// number of `attempts` listed, the one running included.
    pub attempt_count: i32,
    /// When the next attempt is due, while pending.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When the delivery was queued.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// Every attempt ever made, oldest first.
    pub attempts: Vec<AttemptView>,
}

fn view(delivery: webhook_delivery::Model, attempts: Vec<webhook_attempt::Model>) -> DeliveryView {
    DeliveryView {
        id: delivery.id,
        event_type: delivery.event_type,
        match_id: delivery.match_id,
        status: delivery.status,
        attempt_count: delivery.attempt_count,
        next_attempt_at: delivery.next_attempt_at,
        created_at: delivery.created_at,
        attempts: attempts.into_iter().map(AttemptView::from).collect(),
    }
}

async fn of_match(
    state: &AppState,
    project_id: &str,
    match_id: &str,
) -> Result<Vec<DeliveryView>, ApiError> {
    matches::get(&state.db, project_id, match_id).await?;
    let rows = deliveries::of_match(&state.db, project_id, match_id).await?;
    Ok(rows.into_iter().map(|(d, a)| view(d, a)).collect())
}

/// Every webhook delivery of a match with every attempt (empty if the mode
/// had no webhook when the match was made).
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches/{matchId}/deliveries", tag = "matches", operation_id = "listMatchDeliveries",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    responses((status = 200, body = [DeliveryView]), (status = 404, body = Problem)))]
pub async fn list(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
) -> Result<Json<Vec<DeliveryView>>, ApiError> {
    Ok(Json(of_match(&state, &project_id, &match_id).await?))
}

/// Sends the match's webhook again: the delivery is queued from now with a
/// fresh retry schedule; the attempts already logged stay, and
/// `attemptCount` counts on.
#[utoipa::path(post, path = "/v1/projects/{projectId}/matches/{matchId}/deliveries/redeliver", tag = "matches", operation_id = "redeliverMatch",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    responses((status = 202, body = [DeliveryView]), (status = 404, description = "No such match, or it has no delivery", body = Problem),
        (status = 422, description = "VALIDATION_ERROR on `matchId`: the match's game mode was deleted (also when a mode of the same name was created since); or a query parameter, which this route does not take", body = Problem)))]
pub async fn redeliver(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<(StatusCode, Json<Vec<DeliveryView>>), ApiError> {
    let row = matches::get(&state.db, &project_id, &match_id).await?;
    // The match exists: it is its delivery that does not.
    let none_queued = || {
        ApiError::new(
            Code::NotFound,
            format!(
                "match {match_id} has no webhook delivery to send again: none was queued when \
                 it was made (its mode's webhook was off or absent, or the project endpoint's \
                 eventTypes left match.made out)"
            ),
        )
    };
    // A deleted mode's webhooks are not sent, also once a mode of the same
    // name is created again: that is a new mode (docs/webhooks.md, "A
    // deleted mode").
    if matches::own_mode(&state.db, &row).await?.is_none() {
        if deliveries::of_match(&state.db, &project_id, &match_id)
            .await?
            .is_empty()
        {
            return Err(none_queued());
        }
        return Err(ApiError::invalid(vec![FieldError::new(
            "matchId",
            Code::ValidationError,
            format!(
                "match {match_id}'s game mode {} was deleted: a deleted mode's webhooks are \
                 not sent, also once a mode of the same name is created again",
                row.game_mode
            ),
        )]));
    }
    let redelivered = deliveries::redeliver(&state.db, &project_id, &match_id, Utc::now()).await;
    if let Err(matchplane_store::repos::StoreError::NotFound) = redelivered {
        return Err(none_queued());
    }
    redelivered?;
    Ok((
        StatusCode::ACCEPTED,
        Json(of_match(&state, &project_id, &match_id).await?),
    ))
}

/// The event types a delivery can carry, as `?eventType=` takes them; any
/// other value is refused (`422 VALIDATION_ERROR` naming these), never
/// answered with an empty list.
pub use matchplane_webhook::EventType as DeliveryEventType;

/// Query of a mode's deliveries.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ModeDeliveriesQuery {
    /// Only deliveries of this event type.
    #[param(inline)]
    pub event_type: Option<DeliveryEventType>,
    /// Deliveries to return, 1..=200 (default 50).
    #[param(value_type = Option<u64>, minimum = 1, maximum = 200)]
    pub limit: Option<crate::params::PageLimit>,
}

/// The game mode's newest webhook deliveries, `webhook.test` events
/// included, each with every attempt; not those of a deleted mode of the
/// same name.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/deliveries", tag = "game-modes", operation_id = "listGameModeDeliveries",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), ModeDeliveriesQuery),
    responses((status = 200, body = [DeliveryView]), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn of_mode(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<ModeDeliveriesQuery>,
) -> Result<Json<Vec<DeliveryView>>, ApiError> {
    let limit = crate::params::PageLimit::or_default(query.limit);
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let rows = deliveries::of_mode(
        &state.db,
        &project_id,
        (&name, mode.created_at),
        query.event_type.map(DeliveryEventType::as_str),
        limit,
    )
    .await?;
    Ok(Json(rows.into_iter().map(|(d, a)| view(d, a)).collect()))
}
