//! `POST /v1/projects/{projectId}/game-modes/{name}/preview`: what a
//! proposed config would do to the mode's live pool right now.
//!
//! The body is a game-mode body, validated exactly as a `PUT` of the mode
//! would be (every failure at once, `422`). The answer is one cycle of the
//! current config and one of the proposed config over a snapshot of the
//! pool at the current time, side by side ([`matchplane_matchmaker::preview`]):
//! matches, players matched, spread and imbalance percentiles, the
//! searches the proposed re-check would fail (with codes), and the
//! waiting-reason counts under each. Nothing is claimed or changed.
//!
//! Read-only, so a `backend` key may call it like any read of the mode.
//! Bounded in cost three ways: a token bucket per project
//! ([`PREVIEWS_PER_SECOND`](crate::rate_limit::PREVIEWS_PER_SECOND)
//! previews a second, as many in a burst; then `429 RATE_LIMITED` with
//! `Retry-After`), at most
//! [`PREVIEW_CONCURRENCY`](crate::rate_limit::PREVIEW_CONCURRENCY)
//! previews computing at once in the process (others wait, under the
//! request deadline), and at most [`MAX_PREVIEW_POOL`] searches (the
//! longest-waiting) per preview. The cycles run off the async threads.

use crate::auth::ProjectCaller;
use crate::extract::RawJson;
use crate::problem::{ApiError, Problem};
use crate::routes::game_mode_checks::check;
use crate::routes::game_modes::{parse_config, tier_of};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use matchplane_matchmaker::preview::Preview;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::game_modes;
use serde::Serialize;
use utoipa::ToSchema;

/// Most searches one preview runs over: the longest-waiting ones.
pub const MAX_PREVIEW_POOL: usize = 200_000;

/// A preview as answered (see the module documentation).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"at": "2025-12-01T10:00:00.000Z", "poolSize": 20, "truncated": false,
    "current": {"matches": 10, "playersMatched": 20, "matchedShare": 1.0,
        "mmrSpread": {"p50": 100.0, "p90": 100.0, "max": 100.0},
        "teamImbalance": {"p50": 100.0, "p90": 100.0, "max": 100.0},
        "botMatches": 0, "relaxedMatches": 0,
        "failed": {"count": 0, "byCode": {}, "searches": []}, "waiting": 0},
    "proposed": {"matches": 0, "playersMatched": 0, "matchedShare": 0.0,
        "mmrSpread": {"p50": null, "p90": null, "max": null},
        "teamImbalance": {"p50": null, "p90": null, "max": null},
        "botMatches": 0, "relaxedMatches": 0,
        "failed": {"count": 0, "byCode": {}, "searches": []}, "waiting": 20},
    "waitingReasons": {"NO_CANDIDATES_IN_RANGE": {"current": 0, "proposed": 20}}}))]
pub struct PreviewView {
    /// The time both cycles ran at (RFC 3339, milliseconds, `Z`).
    #[schema(format = DateTime)]
    pub at: String,
    /// Searches both cycles ran over.
    pub pool_size: usize,
    /// Whether the pool held more than the preview's bound (200 000) and
    /// only the longest-waiting searches were taken.
    pub truncated: bool,
    /// The current config's cycle.
    #[schema(value_type = matchplane_matchmaker::preview::CycleSummary)]
    pub current: serde_json::Value,
    /// The proposed config's cycle.
    #[schema(value_type = matchplane_matchmaker::preview::CycleSummary)]
    pub proposed: serde_json::Value,
    /// Per waiting-reason code, the searches left waiting with it under
    /// each config.
    #[schema(value_type = std::collections::BTreeMap<String, matchplane_matchmaker::preview::ReasonCounts>)]
    pub waiting_reasons: serde_json::Value,
}

/// Previews a proposed config on the mode's live pool (read-only).
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes/{name}/preview", tag = "game-modes", operation_id = "previewGameMode",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    request_body = GameModeConfig,
    responses(
        (status = 200, body = PreviewView),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 404, description = "GAME_MODE_NOT_FOUND: the project has no game mode `{name}`; NOT_FOUND: no such project", body = Problem),
        (status = 422, description = "Every failed rule in `errors`, as a PUT would answer", body = Problem),
        (status = 429, description = "RATE_LIMITED: more than 2 previews a second for the project", body = Problem)))]
pub async fn preview(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    RawJson(body): RawJson,
) -> Result<Json<PreviewView>, ApiError> {
    state.preview.admit(&project_id)?;
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let tier = tier_of(&state, &project_id).await?;
    let proposed = parse_config(body)?;
    let mut errors = check(&state, &proposed, &tier, Some(&mode.config)).await;
    errors.extend(super::game_mode_checks::name_of_path(
        &proposed.name,
        &name,
        true,
    ));
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let current: GameModeConfig =
        serde_json::from_value(mode.config.clone()).map_err(|e| ApiError::internal(&e))?;
    let _running = state.preview.running().await?;
    let mut pool = state
        .play
        .pool
        .snapshot(&ModeKey::new(&project_id, &name))
        .await?;
    let now = crate::play::unix_now();
    let report = tokio::task::spawn_blocking(move || {
        let truncated = pool.len() > MAX_PREVIEW_POOL;
        if truncated {
            pool.select_nth_unstable_by(MAX_PREVIEW_POOL, |a, b| {
                a.queued_at.total_cmp(&b.queued_at)
            });
            pool.truncate(MAX_PREVIEW_POOL);
        }
        let report = matchplane_matchmaker::preview::preview(&current, &proposed, &pool, now);
        drop(pool);
        (report, truncated)
    })
    .await
    .map_err(|e| ApiError::internal(&e))?;
    view(report)
}

fn view((report, truncated): (Preview, bool)) -> Result<Json<PreviewView>, ApiError> {
    Ok(Json(PreviewView {
        at: matchplane_matchmaker::timestamp::from_unix_seconds(report.at),
        pool_size: report.pool_size,
        truncated,
        current: to_json(&report.current)?,
        proposed: to_json(&report.proposed)?,
        waiting_reasons: to_json(&report.waiting_reasons)?,
    }))
}

/// Serialises a part of the report (never fails for these types).
fn to_json<T: Serialize>(part: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(part).map_err(|e| ApiError::internal(&e))
}
