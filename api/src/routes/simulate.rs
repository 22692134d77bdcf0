//! `POST /v1/projects/{projectId}/simulate`: runs a scenario (the body of
//! `matchplane simulate --scenario`) by the real matching core in virtual
//! time, in the server, and answers its report. Nothing live is touched: the
//! pools, tickets and matches of the project are never read or written.
//!
//! Bounded in cost: a body of up to [`MAX_SIMULATE_BODY_BYTES`], up to
//! [`MAX_ARRIVALS`] arrivals, and [`CPU_BUDGET`] of running time (checked
//! before each cycle) on a blocking thread; past the budget the answer is
//! `422 VALIDATION_ERROR` on `until`; and in number: a project runs at
//! most [`SIMULATIONS_PER_PROJECT`](crate::rate_limit::SIMULATIONS_PER_PROJECT)
//! simulations and replays at once, a process one per CPU, else `429
//! RATE_LIMITED` with `Retry-After` ([`crate::rate_limit::SimulationGate`]).
//! Arrivals may come as CSV text in `arrivalsCsvText` (the columns of
//! `arrivalsCsv`, which names a file and has no meaning here). Any key of
//! the project (it changes nothing).

use crate::auth::ProjectCaller;
use crate::deadline::Deadline;
use crate::extract::RawJson;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::State;
use axum::Json;
use matchplane_matchmaker::simulate::{
    compare_bounded, errors_within, run_bounded, without_server_fields, Event, Scenario,
    ScenarioBody, ScenarioError, Stopped,
};
use matchplane_matchmaker::{Code, FieldError, GameModeConfig};
use serde_json::Value;
use std::time::{Duration, Instant};

/// Largest body of a simulation: 200 000 arrivals of about 100 bytes.
pub const MAX_SIMULATE_BODY_BYTES: usize = 24 * 1024 * 1024;

/// Arrivals of one simulation at most.
pub const MAX_ARRIVALS: usize = 200_000;

/// Running time of one simulation at most.
pub const CPU_BUDGET: Duration = Duration::from_secs(10);

/// Time kept after a run stops at the request's deadline, to answer.
const ANSWER_MARGIN: Duration = Duration::from_millis(500);

/// When a simulation or replay starting now stops: after [`CPU_BUDGET`],
/// or sooner when the request's [`Deadline`] comes first (less
/// [`ANSWER_MARGIN`]), so that a run too long is answered `422` naming what
/// to shorten rather than cut at the deadline with `503`.
pub fn run_ends(deadline: Deadline) -> Instant {
    let by_deadline = deadline.0.checked_sub(ANSWER_MARGIN).unwrap_or(deadline.0);
    (Instant::now() + CPU_BUDGET).min(by_deadline)
}

/// Awaits `work` (a run on a blocking thread) until `ends`: past it,
/// `422 VALIDATION_ERROR` on `field` saying `advice`. The run checks its
/// own time between cycles, but reading a large scenario before them, or
/// writing a large report after, is outside those checks; this keeps the
/// answer a `422`, never the request deadline's `503`. The abandoned run
/// stops at its next check.
///
/// # Errors
/// `work`'s own, or the `422` past `ends`.
pub async fn finish_by<T>(
    started: Instant,
    ends: Instant,
    field: &str,
    advice: &str,
    work: impl std::future::Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    match tokio::time::timeout_at(ends.into(), work).await {
        Ok(done) => done,
        Err(_) => Err(invalid(
            field,
            format!(
                "the run did not finish within its running time ({}): {advice}",
                running_time(started, ends)
            ),
        )),
    }
}

/// The running time a run that `started` and stopped at `ends` had, for
/// its message: `10 s`, or `7.5 s` when the deadline cut it shorter.
pub fn running_time(started: Instant, ends: Instant) -> String {
    let seconds = ends.saturating_duration_since(started).as_secs_f64();
    format!("{} s", (seconds * 10.0).round() / 10.0)
}

/// The members of a scenario body.
const FIELDS: [&str; 8] = [
    "gameMode",
    "compare",
    "tier",
    "seed",
    "until",
    "arrivals",
    "arrivalsCsv",
    "arrivalsCsvText",
];

/// A `VALIDATION_ERROR` on `field`.
fn shape_error(field: &str, message: impl Into<String>) -> FieldError {
    FieldError::new(field, Code::ValidationError, message)
}

fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::invalid(vec![shape_error(field, message)])
}

/// The scenario of `body`: validated like the CLI's, with the arrivals of
/// `arrivalsCsvText` added.
fn scenario_of(mut body: Value) -> Result<Scenario, ApiError> {
    let Some(object) = body.as_object_mut() else {
        return Err(ApiError::bad_request("$", "the scenario is a JSON object"));
    };
    // Every shape error in one 422 (docs/errors.md): the body's unknown
    // fields and its CSV field's type with the scenario's and modes' own.
    let mut errors: Vec<FieldError> = Vec::new();
    object.retain(|k, _| {
        let known = FIELDS.contains(&k.as_str());
        if !known {
            let fields = FIELDS.join(", ");
            errors.push(shape_error(
                k,
                format!("unknown field; a scenario has {fields}"),
            ));
        }
        known
    });
    if object.remove("arrivalsCsv").is_some() {
        errors.push(shape_error(
            "arrivalsCsv",
            "arrivalsCsv names a file of the command line; send the CSV text in arrivalsCsvText",
        ));
    }
    let csv = match object.remove("arrivalsCsvText") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(_) => {
            errors.push(shape_error(
                "arrivalsCsvText",
                "arrivalsCsvText is CSV text",
            ));
            None
        }
    };
    if csv.is_some() {
        // The scenario names its CSV (here by the body's field, not a
        // file): its inline cancels and leaves are then checked once the
        // CSV's arrivals are added (docs/simulate.md, "Inline events"),
        // as on the command line.
        object.insert("arrivalsCsv".to_owned(), Value::from("arrivalsCsvText"));
    }
    let mut scenario = match read_scenario(body) {
        Ok(scenario) if errors.is_empty() => scenario,
        Ok(_) => return Err(ApiError::invalid(errors)),
        Err(more) => {
            errors.extend(more);
            return Err(ApiError::invalid(errors));
        }
    };
    if let Some(text) = csv {
        scenario
            .add_arrivals_csv(&text, "arrivalsCsvText")
            .map_err(|ScenarioError(errors)| ApiError::invalid(errors))?;
    }
    let arrivals = scenario
        .events
        .iter()
        .filter(|e| matches!(e, Event::Arrival { .. }))
        .count();
    if arrivals > MAX_ARRIVALS {
        return Err(invalid(
            "arrivals",
            format!("{arrivals} arrivals: a simulation takes {MAX_ARRIVALS} at most"),
        ));
    }
    Ok(scenario)
}

/// A scenario body (docs/simulate.md) read by the API's typed reader: every
/// shape error of the body and of its game modes (`gameMode`, `compare`)
/// named by its path in the API's words (docs/errors.md), then the
/// scenario's own checks. `matchplane simulate` reads its file with it too,
/// so that the command and this route answer alike.
///
/// # Errors
/// Every failure found, each with its field.
pub fn read_scenario(body: Value) -> Result<Scenario, Vec<FieldError>> {
    let modes: Vec<(&str, Value)> = ["gameMode", "compare"]
        .into_iter()
        .filter_map(|field| Some((field, body.get(field)?.clone())))
        .collect();
    let body: ScenarioBody = crate::body_errors::deserialize_all(body).map_err(|mut errors| {
        // The modes' own shape errors too, so that one answer names all.
        for (field, mode) in modes {
            if let Err(inner) = read_game_mode(mode) {
                errors.extend(errors_within(field, inner));
            }
        }
        errors
    })?;
    Scenario::from_body(body, &super::game_modes::read_config).map_err(|e| e.0)
}

/// A game mode's body as a scenario carries it (server-set fields such as
/// `version` ignored) read by the API's typed reader.
///
/// # Errors
/// Every shape error, each named by its path inside the body.
pub fn read_game_mode(body: Value) -> Result<GameModeConfig, Vec<FieldError>> {
    super::game_modes::read_config(without_server_fields(body))
}

/// Runs a scenario and answers its report (the JSON of `matchplane
/// simulate`, docs/simulate.md).
#[utoipa::path(post, path = "/v1/projects/{projectId}/simulate", tag = "simulate", operation_id = "simulate",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`")),
    request_body(content = Object, description = "A scenario as `matchplane simulate --scenario` reads it (`gameMode`, `compare`, `tier`, `seed`, `until`, `arrivals`), with `arrivalsCsvText` (CSV text) instead of `arrivalsCsv`; at most 200 000 arrivals",
        example = json!({"gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 50, "expansionMultiplier": 2}, "teamAssignment": "balanced", "parties": {"allowParties": false, "maxSize": 1, "keepTogether": true}, "ticketTtlSeconds": 600}, "tier": "pro", "seed": 7, "until": 10, "arrivals": [{"at": 0.0, "playerId": "ana", "mmr": 1500}, {"at": 1.0, "playerId": "ben", "mmr": 1520}]})),
    responses((status = 200, body = Object, description = "The report: `matches`, `unmatched`, `unmatchedReasons`, `stats` (docs/simulate.md); with `compare`, `{\"a\": report, \"b\": report, \"diff\": {…}}`",
            example = json!({"matches": [{"at": 1.0, "teams": [["ana"], ["ben"]], "meanMmr": [1500.0, 1520.0], "mmrSpread": 20.0, "teamImbalance": 20.0}], "unmatched": [], "unmatchedReasons": {}, "stats": {"matches": 1, "matchedPlayers": 2, "stillWaiting": 0, "waitSeconds": {"p50": 0.0, "p90": 1.0, "p99": 1.0, "max": 1.0}, "mmrSpread": {"p50": 20.0, "p90": 20.0, "max": 20.0}, "teamImbalance": {"p50": 20.0, "p90": 20.0, "max": 20.0}}})),
        (status = 400, body = Problem), (status = 404, body = Problem), (status = 413, body = Problem), (status = 422, body = Problem, description = "An invalid scenario (every error listed), over 200 000 arrivals, or past its running time (10 s, less when the request deadline is nearer)"),
        (status = 429, body = Problem, description = "RATE_LIMITED, with Retry-After: the project has 2 simulations and replays running (or the server its most, one per CPU), or its requests per second are used up")))]
pub async fn simulate(
    caller: ProjectCaller,
    State(state): State<AppState>,
    deadline: Deadline,
    RawJson(body): RawJson,
) -> Result<Json<Value>, ApiError> {
    let permit = state.simulations.try_start(&caller.project_id)?;
    // The running time covers reading the scenario and writing the report.
    let started = Instant::now();
    let ends = run_ends(deadline);
    let work = tokio::task::spawn_blocking(move || {
        // Held until the run itself ends, even when the answer is given
        // up (past `ends`, or the client gone).
        let _permit = permit;
        let scenario = scenario_of(body)?;
        let mut keep_going = || Instant::now() < ends;
        let past_budget = |stopped: Stopped| {
            invalid(
                "until",
                format!(
                    "the simulation ran past its running time ({}) at t = {} of {}: shorten until or send fewer arrivals",
                    running_time(started, ends),
                    stopped.at,
                    scenario.until
                ),
            )
        };
        // With `compare`, both modes on the same arrivals and seed, as
        // `matchplane simulate` prints them: `{"a", "b", "diff"}`.
        match &scenario.compare {
            Some(other) => {
                let comparison =
                    compare_bounded(&scenario, other, &mut keep_going).map_err(past_budget)?;
                serde_json::to_value(&comparison)
            }
            None => {
                let report = run_bounded(&scenario, &mut keep_going).map_err(past_budget)?;
                serde_json::to_value(&report)
            }
        }
        .map_err(|e| ApiError::internal(&e))
    });
    let joined = async { work.await.map_err(|e| ApiError::internal(&e))? };
    let report = finish_by(
        started,
        ends,
        "until",
        "send fewer arrivals or shorten until",
        joined,
    )
    .await?;
    Ok(Json(report))
}

#[cfg(test)]
mod running_tests;

#[cfg(test)]
mod tests {
    use crate::state::{ApiConfig, AppState};
    use axum::body::Body;
    use axum::http::{header, Request, StatusCode};
    use serde_json::{json, Value};
    use std::time::Duration;
    use tower::ServiceExt;

    /// Taken by the tests that keep the CPUs busy with simulations: one at
    /// a time, so that none slows another's run past its deadline.
    pub(super) static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// `scenario` sent to the simulate route of an app whose request
    /// deadline is `deadline_ms`: the status and the JSON answer.
    async fn simulate_within(deadline_ms: u64, scenario: &Value) -> (StatusCode, Value) {
        let db = matchplane_store::db::connect("sqlite::memory:")
            .await
            .unwrap();
        let config = ApiConfig {
            operator_token: Some("op".into()),
            operator_token_previous: None,
            ..ApiConfig::default()
        };
        let state =
            AppState::new(db, config).with_request_deadline(Duration::from_millis(deadline_ms));
        let response = crate::router(state)
            .oneshot(
                Request::post("/v1/projects/prj_x/simulate")
                    .header(header::AUTHORIZATION, "Bearer op")
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(scenario.to_string()))
                    .unwrap(),
            )
            .await
            .unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    /// A duel nobody can match in (tolerance 0), run to `until`.
    pub(super) fn duel(until: u64, arrivals: Vec<Value>) -> Value {
        json!({
            "gameMode": {"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 0, "expansionMultiplier": 1},
                "ticketTtlSeconds": 3600},
            "until": until,
            "arrivals": arrivals
        })
    }

    /// A simulation longer than the request deadline stops in time to say
    /// so: `422` on `until`, before the deadline's `503` (which a client
    /// retries, to the same end).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_past_the_request_deadline_is_a_422_on_until() {
        let _alone = HEAVY.lock().await;
        // Over many cycles, a player every 3 000 s, each alone at its MMR
        // (a range of 0) until it expires an hour later: the pool is never
        // empty, so every cycle runs (an empty pool's cycles are skipped).
        let arrivals: Vec<Value> = (0..3_000u32)
            .map(|i| json!({"at": f64::from(i) * 3000.0, "playerId": format!("p{i}"), "mmr": i}))
            .collect();
        let (status, body) = simulate_within(1500, &duel(9_000_000, arrivals)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["errors"][0]["field"], "until", "{body}");
        // The run's own check between cycles and the answer's timeout at
        // the same instant: either words the running time.
        let message = body["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("its running time"), "{message}");
    }

    /// Reading a large scenario counts against the running time too: past
    /// it the answer is the `422`, not the deadline's `503`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scenario_too_large_to_read_in_time_is_a_422_on_until() {
        let _alone = HEAVY.lock().await;
        let arrivals: Vec<Value> = (0..200_000)
            .map(|i| json!({"at": f64::from(i) / 1000.0, "playerId": format!("p{i}"), "mmr": 1500}))
            .collect();
        let (status, body) = simulate_within(1000, &duel(200, arrivals)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["errors"][0]["field"], "until", "{body}");
    }
}
