//! Tiers (docs/game-modes.md#tier-limits, docs/api-tour.md): `GET /v1/tiers`,
//! `GET/PUT/DELETE /v1/tiers/{tier}`; operator only.

use super::created::Created;
use crate::auth::{Caller, Operator};
use crate::extract::ApiJson;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::tier::{DEFAULT_RETENTION_DAYS, DEFAULT_TIER, MAX_RETENTION_DAYS};
use matchplane_matchmaker::validation::is_valid_name;
use matchplane_matchmaker::{Code, FieldError, Tier};
use matchplane_store::entities::tier;
use matchplane_store::repos::tiers::{self, Deletion};
use matchplane_store::repos::StoreError;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A tier's limits as written by the operator.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"minCycleDurationSeconds": 1, "minBaseTolerance": 1, "minExpansionMultiplier": 1, "maxMatchSize": 64, "maxGameModes": 50, "maxConcurrentSearches": 100000, "requestsPerSecond": 2000, "maxPendingTickets": 1000000, "retentionDays": 90}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TierBody {
    /// Optional; must equal the path's tier name when given.
    #[serde(default)]
    #[schema(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$")]
    pub name: Option<String>,
    /// Shortest `matchmakingCycleDurationSeconds` (seconds); at most the
    /// longest cycle a mode may have.
    #[schema(minimum = 0, maximum = 3600)]
    pub min_cycle_duration_seconds: f64,
    /// Lowest `baseTolerance` (percent).
    #[schema(minimum = 0, maximum = 100)]
    pub min_base_tolerance: f64,
    /// Lowest `expansionMultiplier`.
    #[schema(minimum = 1, maximum = 100)]
    pub min_expansion_multiplier: f64,
    /// Largest shape sum (players).
    #[schema(minimum = 2)]
    pub max_match_size: u32,
    /// Most game modes per project.
    pub max_game_modes: u32,
    /// Most live searches per project.
    #[schema(maximum = 9223372036854775807_u64)]
    pub max_concurrent_searches: u64,
    /// Token-bucket rate per project (requests per second), >= 1.
    #[schema(minimum = 1)]
    pub requests_per_second: u32,
    /// Most tickets per project generated and not yet searching. Optional:
    /// when absent, the tier keeps its value (a new tier gets the `free`
    /// tier's).
    #[serde(default)]
    #[schema(maximum = 9223372036854775807_u64)]
    pub max_pending_tickets: Option<u64>,
    /// Days a project's matches and webhook deliveries (with their
    /// attempts) are kept before the worker prunes them, 1 to 3650.
    /// Optional: when absent, the tier keeps its value (a new tier gets 90).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 3650)]
    pub retention_days: Option<u32>,
}

/// A tier as answered.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"name": "pro", "minCycleDurationSeconds": 1, "minBaseTolerance": 1, "minExpansionMultiplier": 1, "maxMatchSize": 64, "maxGameModes": 50, "maxConcurrentSearches": 100000, "requestsPerSecond": 2000, "maxPendingTickets": 1000000, "retentionDays": 90, "updatedAt": "2026-12-01T10:00:00.000Z"}))]
#[serde(rename_all = "camelCase")]
pub struct TierView {
    /// Tier name, e.g. `free`.
    pub name: String,
    /// Shortest `matchmakingCycleDurationSeconds` (seconds).
    pub min_cycle_duration_seconds: f64,
    /// Lowest `baseTolerance` (percent).
    pub min_base_tolerance: f64,
    /// Lowest `expansionMultiplier`.
    pub min_expansion_multiplier: f64,
    /// Largest shape sum (players).
    pub max_match_size: u32,
    /// Most game modes per project.
    pub max_game_modes: u32,
    /// Most live searches per project.
    #[schema(maximum = 9223372036854775807_u64)]
    pub max_concurrent_searches: u64,
    /// Token-bucket rate per project (requests per second).
    pub requests_per_second: u32,
    /// Most tickets per project generated and not yet searching
    /// (`429 TICKET_LIMIT_EXCEEDED` beyond).
    pub max_pending_tickets: u64,
    /// Days a project's matches and webhook deliveries (with their
    /// attempts) are kept before the worker prunes them.
    pub retention_days: u32,
    /// Last change.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub updated_at: DateTime<Utc>,
}

impl From<tier::Model> for TierView {
    fn from(model: tier::Model) -> Self {
        let t = model.to_tier();
        Self {
            name: t.name,
            min_cycle_duration_seconds: t.min_cycle_duration_seconds,
            min_base_tolerance: t.min_base_tolerance,
            min_expansion_multiplier: t.min_expansion_multiplier,
            max_match_size: t.max_match_size,
            max_game_modes: t.max_game_modes,
            max_concurrent_searches: t.max_concurrent_searches,
            requests_per_second: t.requests_per_second,
            max_pending_tickets: t.max_pending_tickets,
            retention_days: t.retention_days,
            updated_at: model.updated_at,
        }
    }
}

fn check(name: &str, body: &TierBody) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut bad = |field: &str, message: &str| {
        errors.push(FieldError::new(field, Code::ValidationError, message));
    };
    if !is_valid_name(name) {
        bad("name", "tier names match ^[a-z0-9][a-z0-9_-]{0,62}$");
    }
    if body.name.as_deref().is_some_and(|n| n != name) {
        bad("name", "the body's name must equal the path's tier name");
    }
    for (field, value) in [
        ("minCycleDurationSeconds", body.min_cycle_duration_seconds),
        ("minBaseTolerance", body.min_base_tolerance),
    ] {
        if !value.is_finite() || value < 0.0 {
            bad(field, "must be a finite number >= 0");
        }
    }
    if !body.min_expansion_multiplier.is_finite() || body.min_expansion_multiplier < 1.0 {
        bad("minExpansionMultiplier", "must be a finite number >= 1");
    }
    // A floor above what any mode may have would leave the tier's projects
    // no valid mode.
    use matchplane_matchmaker::validation::{
        MAX_BASE_TOLERANCE, MAX_CYCLE_DURATION_SECONDS, MAX_EXPANSION_MULTIPLIER,
    };
    for (field, value, most) in [
        (
            "minCycleDurationSeconds",
            body.min_cycle_duration_seconds,
            MAX_CYCLE_DURATION_SECONDS,
        ),
        (
            "minBaseTolerance",
            body.min_base_tolerance,
            MAX_BASE_TOLERANCE,
        ),
        (
            "minExpansionMultiplier",
            body.min_expansion_multiplier,
            MAX_EXPANSION_MULTIPLIER,
        ),
    ] {
        if value > most {
            bad(field, &format!("must be at most {most}, the most a game mode may have: a higher floor leaves no valid mode"));
        }
    }
    if body.max_match_size < 2 {
        bad("maxMatchSize", "must be at least 2");
    }
    if body.requests_per_second < 1 {
        bad("requestsPerSecond", "must be at least 1");
    }
    // Stored as PostgreSQL/SQLite BIGINT: a larger count would be clamped.
    for (field, value) in [
        ("maxConcurrentSearches", Some(body.max_concurrent_searches)),
        ("maxPendingTickets", body.max_pending_tickets),
    ] {
        if value.is_some_and(|v| v > MAX_COUNT) {
            bad(field, "must be at most 9223372036854775807");
        }
    }
    if body
        .retention_days
        .is_some_and(|days| !(1..=MAX_RETENTION_DAYS).contains(&days))
    {
        bad(
            "retentionDays",
            &format!("must be between 1 and {MAX_RETENTION_DAYS} (days)"),
        );
    }
    errors
}

/// Largest count a tier may hold (the database's signed 64-bit integer).
const MAX_COUNT: u64 = i64::MAX as u64;

/// Every tier.
#[utoipa::path(get, path = "/v1/tiers", tag = "tiers", operation_id = "listTiers", security(("bearer" = [])),
    responses((status = 200, body = [TierView]), (status = 401, body = Problem)))]
pub async fn list(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Vec<TierView>>, ApiError> {
    caller.require_operator()?;
    let all = tiers::list(&state.db).await?;
    Ok(Json(all.into_iter().map(TierView::from).collect()))
}

/// One tier.
#[utoipa::path(get, path = "/v1/tiers/{tier}", tag = "tiers", operation_id = "getTier", security(("bearer" = [])),
    params(("tier" = String, Path, description = "Tier name")),
    responses((status = 200, body = TierView), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn get(
    caller: Caller,
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<TierView>, ApiError> {
    caller.require_operator()?;
    Ok(Json(tiers::get(&state.db, &name).await?.into()))
}

/// Creates or replaces a tier; projects on it are held to the new limits
/// from their next request. A create answers `201` with `Location`, a
/// replace `200`, as a game mode's `PUT` does.
#[utoipa::path(put, path = "/v1/tiers/{tier}", tag = "tiers", operation_id = "putTier", security(("bearer" = [])),
    params(("tier" = String, Path, description = "Tier name")),
    request_body = TierBody,
    responses(
        (status = 200, description = "Replaced", body = TierView),
        (status = 201, description = "Created (there was no tier of this name)", body = TierView,
            headers(("Location" = String, description = "`/v1/tiers/{tier}`"))),
        (status = 400, description = "Malformed JSON, or a field the body does not have", body = Problem),
        (status = 401, body = Problem),
        (status = 409, description = "CONFLICT: a tier of this name was created by another request meanwhile", body = Problem),
        (status = 422, body = Problem)))]
pub async fn put(
    _operator: Operator,
    State(state): State<AppState>,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<TierBody>,
) -> Result<Response, ApiError> {
    let errors = check(&name, &body);
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    // The optional fields keep the tier's values when absent.
    let existing = if body.max_pending_tickets.is_none() || body.retention_days.is_none() {
        match tiers::get(&state.db, &name).await {
            Ok(existing) => Some(existing.to_tier()),
            Err(matchplane_store::repos::StoreError::NotFound) => None,
            Err(other) => return Err(other.into()),
        }
    } else {
        None
    };
    let max_pending_tickets = body.max_pending_tickets.unwrap_or_else(|| {
        existing
            .as_ref()
            .map_or(Tier::free().max_pending_tickets, |t| t.max_pending_tickets)
    });
    let retention_days = body.retention_days.unwrap_or_else(|| {
        existing
            .as_ref()
            .map_or(DEFAULT_RETENTION_DAYS, |t| t.retention_days)
    });
    let tier = Tier {
        name,
        min_cycle_duration_seconds: body.min_cycle_duration_seconds,
        min_base_tolerance: body.min_base_tolerance,
        min_expansion_multiplier: body.min_expansion_multiplier,
        max_match_size: body.max_match_size,
        max_game_modes: body.max_game_modes,
        max_concurrent_searches: body.max_concurrent_searches,
        requests_per_second: body.requests_per_second,
        max_pending_tickets,
        retention_days,
    };
    let saved = tiers::put(&state.db, &tier, Utc::now()).await?;
    // Keys are cached with their tier's rate limit, projects with its quotas.
    state.keys.written();
    state.play.cache.quotas_written();
    if !saved.created {
        return Ok(Json(TierView::from(saved.tier)).into_response());
    }
    tracing::info!(tier = %saved.tier.name, "tier created");
    let location = format!("/v1/tiers/{}", saved.tier.name);
    Ok(Created(location, Json(TierView::from(saved.tier))).into_response())
}

/// Deletes a tier no project is on. The default tier (`free`, which a
/// project created without a tier gets) is never deleted.
#[utoipa::path(delete, path = "/v1/tiers/{tier}", tag = "tiers", operation_id = "deleteTier", security(("bearer" = [])),
    params(("tier" = String, Path, description = "Tier name")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = Problem),
        (status = 404, description = "NOT_FOUND: no tier of this name", body = Problem),
        (status = 409, description = "CONFLICT: projects are on the tier (`detail` says how many: move them first), or it is `free`, the default tier of a new project", body = Problem)))]
pub async fn delete(
    _operator: Operator,
    State(state): State<AppState>,
    Path(name): Path<String>,
    _: crate::extract::NoBody,
) -> Result<StatusCode, ApiError> {
    let in_use = |detail: String| ApiError::new(Code::Conflict, detail);
    if name == DEFAULT_TIER {
        // Known or not: a project created without a tier is put on it.
        return Err(in_use(format!(
            "the tier {DEFAULT_TIER} is the default tier a project gets when it is \
             created without one; it cannot be deleted"
        )));
    }
    match tiers::delete(&state.db, &name).await {
        Ok(Deletion::Deleted) => {
            tracing::info!(tier = %name, "tier deleted");
            Ok(StatusCode::NO_CONTENT)
        }
        Ok(Deletion::InUse { projects }) => {
            let (count, them) = if projects == 1 {
                ("1 project is".to_owned(), "it")
            } else {
                (format!("{projects} projects are"), "them")
            };
            Err(in_use(format!(
                "{count} on the tier {name}; move {them} to another tier \
                 (PATCH /v1/projects/{{projectId}}) before deleting it"
            )))
        }
        Err(StoreError::NotFound) => Err(ApiError::not_found(if is_valid_name(&name) {
            format!("there is no tier named {name}")
        } else {
            "there is no such tier".to_owned()
        })),
        Err(other) => Err(other.into()),
    }
}
