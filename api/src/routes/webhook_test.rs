//! `POST /v1/projects/{projectId}/game-modes/{name}/webhook/test` (docs/webhook-events.md):
//! sends a signed `webhook.test` event to the mode's webhook now (the
//! project's endpoint for a mode with `webhook.useProjectEndpoint`,
//! docs/webhooks.md, its `eventTypes` aside: a test is asked for), from this
//! process, with `matchplane-webhook`'s deliverer (the worker's signing, 5 s
//! timeout, SSRF check at delivery), and answers the attempt. API key of the
//! project.
//!
//! The attempt is logged like a queued delivery's (docs/webhooks.md, every attempt
//! logged): a finished `webhook.test` delivery with its one attempt, listed
//! by `GET …/game-modes/{name}/deliveries`.

use crate::auth::ProjectCaller;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{Code, FieldError, GameModeConfig};
use matchplane_store::entities::{game_mode, webhook_attempt, webhook_delivery};
use matchplane_store::repos::project_webhooks::{self, Target};
use matchplane_store::repos::{deliveries, game_modes, webhook_secrets};
use matchplane_webhook::{
    Deliverer, Delivery, DeliveryConfig, Event, Final, Message, Outcome, Secret, WebhookTest,
};
use serde::Serialize;
use utoipa::ToSchema;

/// The attempt of a test event.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"webhookId": "tst_01JDZ8MC4D5E6F7G8H9J0K1M2N", "deliveryId": "dlv_01JDZ8MB3C4D5E6F7G8H9J0K1M", "delivered": true, "attemptedAt": "2026-12-01T10:00:00.000Z", "statusCode": 200, "latencyMs": 42, "error": null, "responseBody": "ok"}))]
#[serde(rename_all = "camelCase")]
pub struct TestAttemptView {
    /// The `webhook-id` sent (`tst_…`).
    pub webhook_id: String,
    /// The logged delivery (`dlv_…`), as listed by `GET …/game-modes/{name}/deliveries`.
    pub delivery_id: String,
    /// Whether the endpoint answered 2xx.
    pub delivered: bool,
    /// When it was sent.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub attempted_at: DateTime<Utc>,
    /// The HTTP status answered; absent on a timeout or connection error.
    pub status_code: Option<u16>,
    /// Time to the answer (milliseconds).
    pub latency_ms: u64,
    /// Why no answer came, if none did.
    pub error: Option<String>,
    /// The first 1 KiB of the answer's body.
    pub response_body: Option<String>,
}

/// Whether a stored mode config has a webhook (and so a secret: to show,
/// rotate, test with).
pub(crate) fn has_webhook(config: &serde_json::Value) -> bool {
    config
        .get("webhook")
        .is_some_and(serde_json::Value::is_object)
}

/// `422 VALIDATION_ERROR` on `webhook`: the game mode has none (its test
/// and its secret's rotation, docs/webhook-events.md).
pub(crate) fn no_webhook() -> ApiError {
    ApiError::invalid(vec![FieldError::new(
        "webhook",
        Code::ValidationError,
        "the game mode has no webhook",
    )])
}

/// Where the test of `mode` goes: its own URL and secrets, or its project's
/// endpoint (even when disabled: a test is asked for).
async fn target(
    state: &AppState,
    mode: &game_mode::Model,
    now: DateTime<Utc>,
) -> Result<Target, ApiError> {
    let config: GameModeConfig =
        serde_json::from_value(mode.config.clone()).map_err(|e| ApiError::internal(&e))?;
    let webhook = config.webhook.ok_or_else(no_webhook)?;
    if !webhook.use_project_endpoint {
        let url = webhook.url.ok_or_else(no_webhook)?;
        return Ok(Target {
            url,
            secrets: webhook_secrets::signing_at(mode, now),
            project_endpoint: false,
            event_types: None,
        });
    }
    match project_webhooks::get(&state.db, &mode.project_id).await {
        Ok(endpoint) => Ok(Target {
            secrets: webhook_secrets::signing_at(&endpoint, now),
            url: endpoint.url,
            project_endpoint: true,
            event_types: None,
        }),
        Err(matchplane_store::repos::StoreError::NotFound) => Err(ApiError::invalid(vec![
            FieldError::new(
                "webhook.useProjectEndpoint",
                Code::ValidationError,
                "the project has no webhook endpoint: set one with PUT /v1/projects/{projectId}/webhook",
            ),
        ])),
        Err(other) => Err(other.into()),
    }
}

/// Sends a signed `webhook.test` now and answers how it went (a failed
/// attempt is still a 200: the answer describes it).
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes/{name}/webhook/test", tag = "game-modes", operation_id = "testWebhook",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = TestAttemptView), (status = 404, body = Problem), (status = 422, description = "No webhook configured", body = Problem)))]
pub async fn test(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<TestAttemptView>, ApiError> {
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let now = Utc::now();
    let target = target(&state, &mode, now).await?;
    let mut secrets = Vec::new();
    for (i, secret) in target.secrets.iter().enumerate() {
        match Secret::parse(secret) {
            Ok(parsed) => secrets.push(parsed),
            // The current secret must sign; a retired one unreadable is skipped.
            Err(e) if i == 0 => return Err(ApiError::internal(&e)),
            Err(_) => {}
        }
    }
    let ulid = ulid::Ulid::new();
    let id = format!("tst_{ulid}");
    let event = Event::Test(WebhookTest {
        project_id: project_id.clone(),
        game_mode: name.clone(),
        created_at: now,
    });
    let message = Message::new(id.clone(), &event).map_err(|e| ApiError::internal(&e))?;
    let payload = String::from_utf8_lossy(&message.body).into_owned();
    let delivery = Delivery::new(&target.url, message, secrets).map_err(|_| no_webhook())?;
    let deliverer = Deliverer::new(DeliveryConfig {
        allow_private: state.config.allow_private_webhooks,
        ..DeliveryConfig::default()
    })
    .map_err(|e| ApiError::internal(&e))?;
    let attempt = deliverer.attempt(&delivery, now).await;
    let delivery_id = format!("dlv_{ulid}");
    let delivered = attempt.outcome == Outcome::Delivered;
    let status = if delivered {
        Final::Delivered
    } else {
        Final::Refused
    };
    let error = attempt.error.map(|e| e.to_string());
    let logged_at = Utc::now();
    let logged = deliveries::log_sent(
        &state.db,
        webhook_delivery::Model {
            id: delivery_id.clone(),
            project_id: project_id.clone(),
            game_mode: name,
            match_id: None,
            event_type: matchplane_webhook::EventType::WebhookTest
                .as_str()
                .to_owned(),
            payload,
            status: status.status().to_owned(),
            attempt_count: 1,
            next_attempt_at: None,
            locked_until: None,
            lock_token: None,
            attempts_before_run: 0,
            created_at: now,
            updated_at: logged_at,
        },
        webhook_attempt::Model {
            id: format!("att_{}", ulid::Ulid::new()),
            delivery_id: delivery_id.clone(),
            project_id,
            attempted_at: attempt.sent_at,
            status_code: attempt.status.map(i32::from),
            latency_ms: i64::try_from(attempt.latency_ms).unwrap_or(i64::MAX),
            error: error.clone(),
            response_body: attempt.response_excerpt.clone(),
        },
    )
    .await;
    // The event was sent: its attempt is the answer also when the log
    // cannot be written (a read-only database during a failover), or a
    // caller retrying the refusal would send a second event
    // (docs/webhook-events.md, `webhook.test`).
    if let Err(error) = logged {
        tracing::warn!(%error, delivery_id, "a webhook test was sent but its attempt could not be logged");
    }
    Ok(Json(TestAttemptView {
        webhook_id: id,
        delivery_id,
        delivered,
        attempted_at: attempt.sent_at,
        status_code: attempt.status,
        latency_ms: attempt.latency_ms,
        error,
        response_body: attempt.response_excerpt,
    }))
}
