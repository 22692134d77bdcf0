//! Game modes (docs/game-modes.md, docs/api-tour.md): `POST/GET /v1/projects/{projectId}/game-modes`,
//! `GET/PUT/DELETE …/game-modes/{name}`, `GET …/{name}/versions`,
//! `POST …/{name}/webhook/rotate-secret`. API key of the project (or the
//! operator).
//!
//! A mode's `ETag` is its version (`"3"`). `PUT` is create-or-replace for
//! config-as-code: it creates an absent mode (`201`, as `POST` would), and
//! honours `If-Match` / `If-None-Match: *` and a body `version`
//! ([`crate::preconditions`]) with `412 VERSION_MISMATCH`.
//!
//! Create and replace validate with the matching core against the
//! project's *current* tier and answer every failure at once, together
//! with the rules that need the project (name taken, `maxGameModes`) or
//! the network (webhook URL safety).

use super::created::Created;
use crate::auth::ProjectCaller;
use crate::credentials::{self, MASKED_SECRET};
use crate::extract::{parse_value, ApiQuery, RawJson};
use crate::preconditions::{etag, Preconditions};
use crate::problem::{ApiError, Problem};
use crate::routes::game_mode_checks::{check, name_of_path};
use crate::routes::game_mode_view::GameModeResponse;
use crate::routes::webhook_status::{self, WebhookStatus};
use crate::routes::webhook_test::has_webhook;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::header::ETAG;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use matchplane_matchmaker::{Code, FieldError, GameModeConfig, Tier};
use matchplane_store::entities::game_mode;
use matchplane_store::repos::{game_modes, projects, tiers, webhook_health, StoreError};
use serde::Serialize;
use serde_json::{Map, Value};

/// Fields the server sets; a body may carry them (e.g. a GET's answer sent
/// back as a PUT) and they are ignored.
const SERVER_SET: [&str; 4] = ["version", "createdAt", "updatedAt", "hold"];

/// A game mode as answered: the docs/game-modes.md body plus `version`, `createdAt`,
/// `updatedAt`, `hold` (docs/game-modes.md, "Holding matching") and
/// `webhook.secret` (in full only on create, on the replace that gives
/// the mode a webhook, and on rotate).
/// Documented as [`GameModeResponse`].
#[derive(Debug, Serialize)]
pub struct GameModeView(pub Value);

fn view(mode: &game_mode::Model, show_secret: bool) -> GameModeView {
    let mut body = match &mode.config {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    body.insert("version".into(), mode.version.into());
    body.insert(
        "createdAt".into(),
        matchplane_matchmaker::timestamp::format(&mode.created_at).into(),
    );
    body.insert(
        "updatedAt".into(),
        matchplane_matchmaker::timestamp::format(&mode.updated_at).into(),
    );
    body.insert("hold".into(), crate::routes::mode_hold::hold_value(mode));
    // Only a mode with a webhook shows its secret (docs/game-modes.md,
    // "`webhook`"): a `webhook` object added here would read as one.
    if let Some(Value::Object(webhook)) = body.get_mut("webhook") {
        let secret = if show_secret {
            mode.webhook_secret.clone()
        } else {
            MASKED_SECRET.to_owned()
        };
        webhook.insert("secret".into(), secret.into());
    }
    GameModeView(Value::Object(body))
}

/// Drops server-set fields, then parses the docs/game-modes.md config, listing every
/// unknown, missing or wrongly typed field.
///
/// A `webhook` stays once its server-set fields (`secret`, `status`) are
/// dropped, even empty: one without `url` (`{}`, or an answer whose `url`
/// line was deleted) is refused by validation (docs/game-modes.md,
/// "Validation": `INVALID_WEBHOOK_URL` on `webhook.url`), never ignored,
/// so that no edit removes a mode's webhook unseen.
pub(crate) fn parse_config(mut body: Value) -> Result<GameModeConfig, ApiError> {
    if let Value::Object(map) = &mut body {
        for field in SERVER_SET {
            map.remove(field);
        }
        if let Some(Value::Object(webhook)) = map.get_mut("webhook") {
            webhook.remove("secret");
            webhook.remove("status");
        }
    } else {
        return parse_value(body);
    }
    read_config(body).map_err(ApiError::bad_body)
}

/// A game mode's config from its body (an object without server-set
/// fields), or every unknown, missing or wrongly typed field, each named by
/// its path (also the reader of a simulated scenario's modes).
///
/// # Errors
/// The field errors, never empty.
pub(crate) fn read_config(body: Value) -> Result<GameModeConfig, Vec<FieldError>> {
    if !body.is_object() {
        return Err(vec![FieldError::new(
            "",
            Code::ValidationError,
            "a game mode is a JSON object",
        )]);
    }
    crate::body_errors::deserialize_all(body)
}

pub(crate) async fn tier_of(state: &AppState, project_id: &str) -> Result<Tier, ApiError> {
    let project = projects::get(&state.db, project_id).await?;
    Ok(tiers::get(&state.db, &project.tier).await?.to_tier())
}

fn stored(config: &GameModeConfig) -> Result<Value, ApiError> {
    serde_json::to_value(config).map_err(|e| ApiError::internal(&e))
}

/// Creates a game mode (version 1); the answer shows its webhook secret.
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes", tag = "game-modes", operation_id = "createGameMode",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body = GameModeConfig,
    responses(
        (status = 201, body = GameModeResponse,
            headers(("Location" = String, description = "`/v1/projects/{projectId}/game-modes/{name}`"))),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 404, body = Problem),
        (status = 409, description = "Name taken", body = Problem),
        (status = 422, description = "Every failed rule in `errors`", body = Problem),
        (status = 429, description = "maxGameModes reached", body = Problem)))]
pub async fn create(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    RawJson(body): RawJson,
) -> Result<Created<Json<GameModeView>>, ApiError> {
    let tier = tier_of(&state, &project_id).await?;
    let config = parse_config(body)?;
    let mut errors = check(&state, &config, &tier, None).await;
    match game_modes::get(&state.db, &project_id, &config.name).await {
        Ok(_) => errors.push(FieldError::new(
            "name",
            Code::Conflict,
            format!("a game mode named `{}` already exists", config.name),
        )),
        Err(matchplane_store::repos::StoreError::NotFound) => {}
        Err(other) => return Err(other.into()),
    }
    let mode = insert(&state, &project_id, &config, &tier, errors).await?;
    Ok(Created(location(&mode), Json(view(&mode, true))))
}

/// Stores a new mode (version 1, a fresh webhook secret) once the project's
/// `maxGameModes` allows it and `errors` (the other rules) is empty.
async fn insert(
    state: &AppState,
    project_id: &str,
    config: &GameModeConfig,
    tier: &Tier,
    mut errors: Vec<FieldError>,
) -> Result<game_mode::Model, ApiError> {
    let full = |count: u64| {
        let allowed = match tier.max_game_modes {
            1 => "1 game mode".to_owned(),
            n => format!("{n} game modes"),
        };
        FieldError::new(
            "name",
            Code::QuotaExceeded,
            format!(
                "tier {} allows {allowed} and the project has {count}",
                tier.name
            ),
        )
    };
    // Read first to list the quota with the body's other errors; the
    // create counts again, atomically, for creates made at once.
    let max = u64::from(tier.max_game_modes);
    let count = game_modes::count(&state.db, project_id).await?;
    if count >= max {
        errors.push(full(count));
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let secret = credentials::webhook_secret(&mut rand::rngs::OsRng);
    let new = game_modes::NewMode {
        name: &config.name,
        config: stored(config)?,
        webhook_secret: &secret,
    };
    let mode = match game_modes::create_within(&state.db, project_id, new, max, Utc::now()).await? {
        game_modes::Created::Created(mode) => *mode,
        game_modes::Created::Full { count } => return Err(ApiError::invalid(vec![full(count)])),
    };
    state.play.cache.modes_written();
    tracing::info!(project_id = %project_id, game_mode = %mode.name, "game mode created");
    Ok(mode)
}

/// A mode's answer with its `ETag`.
type Tagged = (
    [(axum::http::HeaderName, HeaderValue); 1],
    Json<GameModeView>,
);

/// A created mode's `Location`.
fn location(mode: &game_mode::Model) -> String {
    format!("/v1/projects/{}/game-modes/{}", mode.project_id, mode.name)
}

fn tagged(mode: &game_mode::Model, show_secret: bool) -> Tagged {
    ([(ETAG, etag(mode.version))], Json(view(mode, show_secret)))
}

/// The project's game modes (secrets masked), each with `webhook.status`.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes", tag = "game-modes", operation_id = "listGameModes",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    responses((status = 200, body = [GameModeResponse]), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn list(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
) -> Result<Json<Vec<GameModeView>>, ApiError> {
    projects::get(&state.db, &project_id).await?;
    let modes = game_modes::list(&state.db, &project_id).await?;
    let health = webhook_health::of_project(&state.db, &project_id).await?;
    Ok(Json(
        modes
            .iter()
            .map(|m| {
                let mut answer = view(m, false);
                let of_mode = health.iter().find(|h| h.game_mode == m.name);
                webhook_status::attach(&mut answer.0, &WebhookStatus::from_health(of_mode));
                answer
            })
            .collect(),
    ))
}

/// One game mode (secret masked).
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}", tag = "game-modes", operation_id = "getGameMode",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = GameModeResponse,
        headers(("ETag" = String, description = "The version in quotes, e.g. `\"3\"`: send it back as `If-Match`"))),
        (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
) -> Result<Tagged, ApiError> {
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let (etag_header, Json(mut answer)) = tagged(&mode, false);
    let health = webhook_health::get(&state.db, &project_id, &name).await?;
    webhook_status::attach(&mut answer.0, &WebhookStatus::from_health(health.as_ref()));
    Ok((etag_header, Json(answer)))
}

/// Replaces a game mode's config, or creates it when absent (config as
/// code): `version` +1 when anything changed, the new version kept in the
/// history. The name cannot change. `If-Match: "<version>"` (or a body
/// `version`) applies it only to that version, `If-None-Match: *` only
/// creates: else `412 VERSION_MISMATCH`. With `?guard=waitP90,…` the
/// last recorded hour is replayed under the current and the proposed
/// config first, and a guarded figure worse by more than `guardTolerance`
/// refuses the change (`409 CONFIG_REGRESSION`, docs/tuning.md).
#[utoipa::path(put, path = "/v1/projects/{projectId}/game-modes/{name}", tag = "game-modes", operation_id = "replaceGameMode",
    security(("bearer" = [])),
    // One `params(...)`: utoipa keeps only the last of several, which
    // once dropped `guard` and `guardTolerance` from the document.
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"),
        ("If-Match" = Option<String>, Header, description = "`\"<version>\"` (the `ETag` of a GET), a list of them, or `*`"),
        ("If-None-Match" = Option<String>, Header, description = "`*`: only create"),
        crate::routes::replay::GuardQuery),
    request_body = GameModeConfig,
    responses(
        (status = 200, description = "Replaced; when this gives the mode a webhook it had not, the webhook gets a new secret, shown this once", body = GameModeResponse,
            headers(("ETag" = String, description = "The new version in quotes"))),
        (status = 201, description = "Created (the mode was absent); the webhook secret is shown", body = GameModeResponse,
            headers(("ETag" = String, description = "`\"1\"`"),
                ("Location" = String, description = "`/v1/projects/{projectId}/game-modes/{name}`"))),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 403, description = "FORBIDDEN: the key is not `admin`", body = Problem),
        (status = 404, description = "No such project", body = Problem),
        (status = 409, description = "Changed concurrently (no precondition sent); CONFIG_REGRESSION: a guarded figure worsened by more than `guardTolerance` on the last recorded hour (both figures in `guard`)", body = Problem),
        (status = 412, description = "VERSION_MISMATCH: `If-Match`, `If-None-Match` or the body's `version` does not hold", body = Problem),
        (status = 422, description = "Every failed rule in `errors` (an unknown `guard` figure among them); RECORDING_REQUIRED: a guard and no search recorded in the last hour", body = Problem),
        (status = 429, description = "RATE_LIMITED: the project's requests per second are used up, or a guarded PUT is past the replays' limits (docs/tuning.md); see Retry-After", body = Problem)))]
pub async fn replace(
    _caller: ProjectCaller,
    preconditions: Preconditions,
    State(state): State<AppState>,
    deadline: crate::deadline::Deadline,
    Path((project_id, name)): Path<(String, String)>,
    ApiQuery(guard_query): ApiQuery<crate::routes::replay::GuardQuery>,
    RawJson(body): RawJson,
) -> Result<Response, ApiError> {
    let current = match game_modes::get(&state.db, &project_id, &name).await {
        Ok(mode) => Some(mode),
        Err(matchplane_store::repos::StoreError::NotFound) => None,
        Err(other) => return Err(other.into()),
    };
    let tier = tier_of(&state, &project_id).await?;
    preconditions.check(current.as_ref().map(|m| m.version), &body)?;
    let config = parse_config(body)?;
    // A config sent again unchanged changes nothing, and is answered so
    // even when it would not pass today's checks (a tier whose floors the
    // operator raised since): the mode goes on running as it is
    // (docs/config-as-code.md).
    let unchanged = match &current {
        Some(mode) => stored(&config)? == mode.config,
        None => false,
    };
    let mut errors = if unchanged {
        Vec::new()
    } else {
        check(&state, &config, &tier, current.as_ref().map(|m| &m.config)).await
    };
    errors.extend(name_of_path(&config.name, &name, current.is_some()));
    let guard = guard_query.parse(&mut errors);
    if let (Some(guard), true) = (&guard, errors.is_empty()) {
        let running = match &current {
            Some(mode) => Some(
                serde_json::from_value(mode.config.clone()).map_err(|e| ApiError::internal(&e))?,
            ),
            None => None,
        };
        if running.as_ref() != Some(&config) {
            Box::pin(crate::routes::replay::guard(
                &state,
                deadline,
                &project_id,
                running,
                &config,
                &tier,
                guard,
            ))
            .await?;
        }
    }
    let Some(current) = current else {
        let mode = insert(&state, &project_id, &config, &tier, errors)
            .await
            .map_err(|e| lost_race(e, &preconditions))?;
        return Ok(Created(location(&mode), tagged(&mode, true)).into_response());
    };
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let config = stored(&config)?;
    if config == current.config {
        return Ok(tagged(&current, false).into_response());
    }
    // A mode given a webhook when it had none gets a new secret, shown
    // once as a create shows it (docs/game-modes.md, "`webhook`"): one
    // given back after a removal never brings the removed one's back.
    let new_secret = (!has_webhook(&current.config) && has_webhook(&config))
        .then(|| credentials::webhook_secret(&mut rand::rngs::OsRng));
    // Only onto the version checked above: a write in between is a 412
    // (with a precondition) or a 409, never silently overwritten.
    let written = game_modes::replace_at(
        &state.db,
        &project_id,
        &name,
        config.clone(),
        Some(current.version),
        new_secret.as_deref(),
        Utc::now(),
    )
    .await;
    let mode = match written {
        Ok(mode) => mode,
        // Another writer got there first with this very config (two
        // pipelines applying one file): nothing is left to change.
        Err(StoreError::Conflict) if !preconditions.any() => {
            return match game_modes::get(&state.db, &project_id, &name).await {
                Ok(now) if now.config == config => Ok(tagged(&now, false).into_response()),
                _ => Err(ApiError::from(StoreError::Conflict)),
            };
        }
        Err(e) => return Err(lost_race(e.into(), &preconditions)),
    };
    state.play.cache.modes_written();
    tracing::info!(project_id = %project_id, game_mode = %name, version = mode.version, "game mode replaced");
    Ok(tagged(&mode, new_secret.is_some()).into_response())
}

/// A concurrent write got in between the check and the write: with a
/// precondition, that precondition no longer holds.
fn lost_race(err: ApiError, preconditions: &Preconditions) -> ApiError {
    if err.code() == Code::Conflict.as_str() && preconditions.any() {
        ApiError::version_mismatch("the game mode changed while this write ran; read it again")
    } else {
        err
    }
}

/// Rotates the webhook secret; the answer shows the new one. The old one
/// keeps signing for 24 hours. A mode without a webhook has none to
/// rotate: `422`, as for its webhook test (docs/webhook-events.md).
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes/{name}/webhook/rotate-secret", tag = "game-modes", operation_id = "rotateWebhookSecret",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = GameModeResponse), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 422, description = "VALIDATION_ERROR on `webhook`: the mode has no webhook", body = Problem)))]
pub async fn rotate_secret(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    _: crate::extract::NoBody,
) -> Result<Json<GameModeView>, ApiError> {
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    if !has_webhook(&mode.config) {
        return Err(crate::routes::webhook_test::no_webhook());
    }
    let secret = credentials::webhook_secret(&mut rand::rngs::OsRng);
    let mode = game_modes::rotate_secret(&state.db, &project_id, &name, &secret, Utc::now())
        .await
        .map_err(super::mode_error(&name))?;
    tracing::info!(project_id = %project_id, game_mode = %name, "webhook secret rotated");
    Ok(Json(view(&mode, true)))
}

#[cfg(test)]
mod tests;
