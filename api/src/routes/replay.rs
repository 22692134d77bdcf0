//! Replays of a mode's recording (issue 22): `POST
//! /v1/projects/{projectId}/game-modes/{name}/replay?from=&to=` runs the
//! searches recorded in the window under the mode's current config and
//! under the proposed one (the body, a game-mode body validated exactly as
//! a `PUT`), with the core's compare code
//! ([`matchplane_matchmaker::simulate::compare_bounded`]), and answers both
//! reports and the diff; the config guard of a `PUT …?guard=` ([`guard`])
//! does the same over the last recorded hour and refuses a regression.
//!
//! The recorded events become a scenario: each start an arrival (at its
//! second since `from`, with its hashed player id, MMR, latencies and
//! party), each cancel the API saw a cancel (the worker's ends are left
//! out: the runs make their own); the scenario
//! runs from 0 to the window's length on the project's tier, seed 0.
//! Bounded like the console's simulate: at most [`MAX_ARRIVALS`] starts
//! (the first ones of the window; `truncated` says so) and [`run_ends`]
//! for both runs (then `422 VALIDATION_ERROR` on `to`). A replay changes
//! nothing, so it is a read (any key of the project), and it shares the
//! previews' per-project rate and process-wide gate, and the simulations'
//! limit on runs at once ([`crate::rate_limit::SimulationGate`]).

use crate::auth::ProjectCaller;
use crate::deadline::Deadline;
use crate::extract::{ApiQuery, RawJson};
use crate::problem::{ApiError, Problem};
use crate::rate_limit::SimulationPermit;
use crate::routes::game_mode_checks::check;
use crate::routes::game_modes::{parse_config, tier_of};
use crate::routes::simulate::{finish_by, run_ends, running_time, MAX_ARRIVALS};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_matchmaker::simulate::{compare_bounded, Comparison, Event, Scenario};
use matchplane_matchmaker::{Code, FieldError, GameModeConfig, Party, Tier};
use matchplane_store::entities::search_recording;
use matchplane_store::repos::game_modes;
use matchplane_store::repos::recordings::{self, Kind};
use serde::{Deserialize, Serialize};
use std::time::Instant;
use utoipa::{IntoParams, ToSchema};

mod guard;
pub use guard::{guard, Guard, GuardQuery};

/// The window a guarded `PUT` replays: the last hour.
pub const GUARD_WINDOW: TimeDelta = TimeDelta::hours(1);

/// `?from=&to=` of the recording and replay routes.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct WindowQuery {
    /// Start of the window (RFC 3339, included); default `to` minus one hour.
    #[serde(default, deserialize_with = "crate::params::date_time")]
    pub from: Option<DateTime<Utc>>,
    /// End of the window (RFC 3339, excluded); default now, and a later
    /// one is taken as now (nothing after now is recorded yet).
    #[serde(default, deserialize_with = "crate::params::date_time")]
    pub to: Option<DateTime<Utc>>,
}

impl WindowQuery {
    /// The window in Unix milliseconds, `from < to`, `to` at most `now`: a
    /// replay over a window that ran into the future counted every search
    /// still waiting as waiting until its end (years of wait).
    ///
    /// # Errors
    /// `422 VALIDATION_ERROR` on `from` when it is not before `to`.
    pub fn millis(&self, now: DateTime<Utc>) -> Result<(i64, i64), ApiError> {
        let to = self.to.map_or(now, |to| to.min(now));
        let from = self.from.unwrap_or(to - GUARD_WINDOW);
        if from >= to {
            return Err(window_backwards(from, to));
        }
        Ok((from.timestamp_millis(), to.timestamp_millis()))
    }
}

/// `422 VALIDATION_ERROR` on `from` for a window that does not run
/// forwards, with both ends as they were taken (a missing one defaulted).
pub fn window_backwards(from: DateTime<Utc>, to: DateTime<Utc>) -> ApiError {
    let at = |t: DateTime<Utc>| matchplane_matchmaker::timestamp::format(&t);
    ApiError::invalid(vec![FieldError::new(
        "from",
        Code::ValidationError,
        format!(
            "`from` must be before `to`; got from {} and to {}",
            at(from),
            at(to)
        ),
    )])
}

/// Recorded events of a window, as a scenario's events.
#[derive(Debug)]
pub struct Recorded {
    /// Arrivals and cancels, at seconds since the window's start.
    pub events: Vec<Event>,
    /// Search starts among them.
    pub arrivals: usize,
    /// Whether the window held more than [`MAX_ARRIVALS`] starts (the
    /// later ones were left out).
    pub truncated: bool,
}

/// The event of one recorded row, at seconds since `from_ms`: a start or
/// a player's cancel; `None` for an end the worker made (matched, expired,
/// failed) and for a row kind this build does not know.
pub fn event_of(row: search_recording::Model, from_ms: i64) -> Option<Event> {
    let at = (row.at_ms - from_ms) as f64 / 1000.0;
    match Kind::of(row.event)? {
        Kind::Start => Some(Event::Arrival {
            at,
            mmr: row.mmr,
            ping_ms: None,
            party: match (row.party_hash, row.party_members) {
                (Some(id), Some(members)) => Some(Party {
                    id: id.into(),
                    members: members.split('|').map(str::to_owned).collect(),
                }),
                _ => None,
            },
            latencies: row.latencies.map(|text| {
                text.split('|')
                    .filter_map(|pair| {
                        let (region, ms) = pair.split_once('=')?;
                        Some((region.into(), ms.parse::<f64>().ok()?))
                    })
                    .collect()
            }),
            player_id: row.player_hash,
            attributes: row
                .attributes
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default(),
            data: None,
            // Recordings keep no answers: a replay's players accept.
            answer: None,
        }),
        Kind::Cancel => Some(Event::Cancel {
            at,
            player_id: row.player_hash,
        }),
        // The worker's own ends (matched, expired, failed): a replay makes
        // its own under the config it runs; replayed as cancels they would
        // take every matched player out of the run (docs/tuning.md).
        Kind::End => None,
    }
}

/// Reads the mode's recorded events of the window, page by page, stopping
/// after [`MAX_ARRIVALS`] starts.
///
/// # Errors
/// A database failure.
pub async fn load(
    state: &AppState,
    project_id: &str,
    name: &str,
    window: (i64, i64),
) -> Result<Recorded, ApiError> {
    let mut events = Vec::new();
    let mut arrivals = 0;
    let mut after = None;
    loop {
        let page = recordings::window(
            &state.db,
            project_id,
            name,
            window,
            after,
            recordings::MAX_PAGE,
        )
        .await?;
        let full = page.len() as u64 == recordings::MAX_PAGE;
        after = page.last().map(|r| (r.at_ms, r.id));
        for row in page {
            let Some(event) = event_of(row, window.0) else {
                continue;
            };
            if matches!(event, Event::Arrival { .. }) {
                if arrivals == MAX_ARRIVALS {
                    return Ok(Recorded {
                        events,
                        arrivals,
                        truncated: true,
                    });
                }
                arrivals += 1;
            }
            events.push(event);
        }
        if !full {
            return Ok(Recorded {
                events,
                arrivals,
                truncated: false,
            });
        }
    }
}

/// Runs `recorded` under `current` and `proposed` (on a blocking thread,
/// within [`run_ends`]), holding `permit` until the run ends.
///
/// # Errors
/// `422 VALIDATION_ERROR` on `to` past the budget.
async fn replay(
    (current, proposed): (GameModeConfig, GameModeConfig),
    tier: Tier,
    events: Vec<Event>,
    seconds: f64,
    deadline: Deadline,
    permit: Option<SimulationPermit>,
) -> Result<Comparison, ApiError> {
    let started = Instant::now();
    let ends = run_ends(deadline);
    let work = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let scenario = Scenario {
            game_mode: current,
            tier,
            seed: 0,
            until: seconds,
            events,
            arrivals_csv: None,
            compare: None,
        };
        compare_bounded(&scenario, &proposed, &mut || Instant::now() < ends).map_err(|stopped| {
            ApiError::invalid(vec![FieldError::new(
                "to",
                Code::ValidationError,
                format!(
                    "the replay ran past its running time ({}) at t = {} of {seconds}: shorten the window",
                    running_time(started, ends),
                    stopped.at
                ),
            )])
        })
    });
    let joined = async { work.await.map_err(|e| ApiError::internal(&e))? };
    finish_by(started, ends, "to", "shorten the window", joined).await
}

/// A replay as answered.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"from": "2026-12-01T10:00:00.000Z", "to": "2026-12-01T11:00:00.000Z",
    "arrivals": 2, "truncated": false,
    "a": {"matches": [], "unmatched": [], "unmatchedReasons": {}, "stats": {}},
    "b": {"matches": [], "unmatched": [], "unmatchedReasons": {}, "stats": {}},
    "diff": {"waitP90": [4.0, 12.0], "mmrSpreadP50": [60.0, 20.0]}}))]
pub struct ReplayView {
    /// Start of the window replayed.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub from: DateTime<Utc>,
    /// End of the window replayed (the runs' `until`).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub to: DateTime<Utc>,
    /// Recorded search starts replayed.
    pub arrivals: usize,
    /// Whether the window held more than 200 000 starts (the later ones
    /// were left out).
    pub truncated: bool,
    /// The report under the current config (the JSON of `matchplane
    /// simulate`, player ids hashed).
    #[schema(value_type = Object)]
    pub a: serde_json::Value,
    /// The report under the proposed config.
    #[schema(value_type = Object)]
    pub b: serde_json::Value,
    /// Per figure (`matches`, `waitP90`, `mmrSpreadP50`, …), `[a, b]`.
    #[schema(value_type = Object)]
    pub diff: serde_json::Value,
}

fn to_json<T: Serialize>(part: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(part).map_err(|e| ApiError::internal(&e))
}

/// The diff as `simulate` writes it (its seconds to the millisecond,
/// docs/simulate.md).
fn diff_json(diff: &std::collections::BTreeMap<&str, [Option<f64>; 2]>) -> serde_json::Value {
    serde_json::json!(matchplane_matchmaker::simulate::written_diff(diff))
}

/// `422 RECORDING_REQUIRED`: nothing recorded to replay.
fn recording_required(name: &str, window: &str) -> ApiError {
    ApiError::with_status(
        StatusCode::UNPROCESSABLE_ENTITY,
        Code::RecordingRequired.as_str(),
        format!(
            "game mode {name} recorded no search start {window}: enable its recording block and let traffic arrive"
        ),
    )
}

/// Replays the mode's recorded searches of a window under its current
/// config and a proposed one (read-only).
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes/{name}/replay", tag = "game-modes", operation_id = "replayGameMode",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), WindowQuery),
    request_body = GameModeConfig,
    responses(
        (status = 200, body = ReplayView),
        (status = 400, description = "Malformed JSON", body = Problem),
        (status = 404, description = "GAME_MODE_NOT_FOUND: the project has no game mode `{name}`; NOT_FOUND: no such project", body = Problem),
        (status = 422, description = "Every failed rule in `errors` as a PUT would answer, a query parameter that is missing or invalid among them; `RECORDING_REQUIRED` when the window holds no recorded start; past its running time (10 s, less when the request deadline is nearer)", body = Problem),
        (status = 429, description = "RATE_LIMITED, with Retry-After: more than 2 previews and replays a second for the project, 2 simulations and replays of the project running (or the server's most, one per CPU), or its requests per second used up", body = Problem)))]
pub async fn replay_mode(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    deadline: Deadline,
    Path((project_id, name)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<WindowQuery>,
    RawJson(body): RawJson,
) -> Result<Json<ReplayView>, ApiError> {
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let tier = tier_of(&state, &project_id).await?;
    let window = query.millis(Utc::now())?;
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
    // Only what runs a replay counts against the rate: a refused body
    // is answered at once.
    state.preview.admit(&project_id)?;
    let permit = state.simulations.try_start(&project_id)?;
    let recorded = load(&state, &project_id, &name, window).await?;
    if recorded.arrivals == 0 {
        return Err(recording_required(&name, "in the window"));
    }
    let _running = state.preview.running().await?;
    let seconds = (window.1 - window.0) as f64 / 1000.0;
    let comparison = replay(
        (current, proposed),
        tier,
        recorded.events,
        seconds,
        deadline,
        Some(permit),
    )
    .await?;
    let instant = |ms: i64| DateTime::from_timestamp_millis(ms).unwrap_or_default();
    Ok(Json(ReplayView {
        from: instant(window.0),
        to: instant(window.1),
        arrivals: recorded.arrivals,
        truncated: recorded.truncated,
        a: to_json(&comparison.a)?,
        b: to_json(&comparison.b)?,
        diff: diff_json(&comparison.diff),
    }))
}
