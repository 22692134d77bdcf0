//! The config guard of a `PUT` of a mode (docs/game-modes.md): `?guard=`
//! and `?guardTolerance=`, the replay of the last recorded hour under the
//! current and the proposed config, and the `409 CONFIG_REGRESSION` when a
//! guarded figure worsens.

use super::{load, recording_required, replay, GUARD_WINDOW};
use crate::deadline::Deadline;
use crate::problem::ApiError;
use crate::state::AppState;
use axum::http::StatusCode;
use chrono::Utc;
use matchplane_matchmaker::simulate::{
    check_guard, parse_guard, GuardVerdict, DEFAULT_GUARD_TOLERANCE,
};
use matchplane_matchmaker::{Code, FieldError, GameModeConfig, Tier};
use serde::Deserialize;
use utoipa::IntoParams;

/// `?guard=waitP90,mmrSpreadP50&guardTolerance=0.1` of a `PUT` of a mode.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct GuardQuery {
    /// Figures the change may not worsen, comma separated (`matches`,
    /// `matchedPlayers`, `matchedShare`, `stillWaiting`, `waitP50`,
    /// `waitP90`, `waitP99`, `matchedWaitP50`, `matchedWaitP90`,
    /// `mmrSpreadP50`, `mmrSpreadP90`, `teamImbalanceP50`,
    /// `teamImbalanceP90`, `relaxedMatches`, `botMatches`, `ended`): the
    /// last recorded hour is replayed under the current and the proposed
    /// config first.
    pub guard: Option<String>,
    /// How much worse a guarded figure may get, a fraction of the current
    /// value (0 to 10; default 0.1).
    #[param(minimum = 0, maximum = 10)]
    pub guard_tolerance: Option<f64>,
}

/// A guard asked for, parsed.
#[derive(Debug, Clone)]
pub struct Guard {
    /// The guarded figures.
    pub figures: Vec<&'static str>,
    /// The tolerance (fraction).
    pub tolerance: f64,
}

impl GuardQuery {
    /// The guard asked for, if any; failures pushed to `errors`
    /// (`VALIDATION_ERROR` on `guard` or `guardTolerance`).
    pub fn parse(&self, errors: &mut Vec<FieldError>) -> Option<Guard> {
        let tolerance = self.guard_tolerance.unwrap_or(DEFAULT_GUARD_TOLERANCE);
        if !(0.0..=10.0).contains(&tolerance) {
            errors.push(FieldError::new(
                "guardTolerance",
                Code::ValidationError,
                "guardTolerance is a fraction from 0 to 10 (0.1: 10 % worse at most)",
            ));
        }
        if self.guard_tolerance.is_some() && self.guard.is_none() {
            errors.push(FieldError::new(
                "guardTolerance",
                Code::ValidationError,
                "guardTolerance goes with guard",
            ));
        }
        let figures = match parse_guard(self.guard.as_deref()?, "guard") {
            Ok(figures) => figures,
            Err(e) => {
                errors.push(e);
                return None;
            }
        };
        Some(Guard { figures, tolerance })
    }
}

/// The guard's refusal: `409 CONFIG_REGRESSION` with both figures of each
/// guarded figure in `guard`.
fn regression(verdict: GuardVerdict) -> ApiError {
    let worse: Vec<String> = verdict
        .figures
        .iter()
        .filter(|f| f.regressed)
        .map(|f| {
            format!(
                "{} {} -> {}",
                f.figure,
                f.current.map_or("none".into(), |v| format!("{v:.2}")),
                f.proposed.map_or("none".into(), |v| format!("{v:.2}"))
            )
        })
        .collect();
    let detail = format!(
        "the proposed config worsens {} by more than {:.0} % on the last recorded hour",
        worse.join(", "),
        verdict.tolerance * 100.0
    );
    ApiError::with_status(
        StatusCode::CONFLICT,
        Code::ConfigRegression.as_str(),
        detail,
    )
    .with_guard(verdict)
}

/// The config guard of a `PUT`: replays the mode's last recorded hour
/// (at `now`) under `current` and `proposed` and passes when no guarded
/// figure worsens by more than the tolerance.
///
/// # Errors
/// `422 RECORDING_REQUIRED` (no start recorded in the last hour), `409
/// CONFIG_REGRESSION` (with the verdict), `422` past the replay's budget.
pub async fn guard(
    state: &AppState,
    deadline: Deadline,
    project_id: &str,
    current: Option<GameModeConfig>,
    proposed: &GameModeConfig,
    tier: &Tier,
    guard: &Guard,
) -> Result<(), ApiError> {
    let now = Utc::now();
    let window = (
        (now - GUARD_WINDOW).timestamp_millis(),
        now.timestamp_millis(),
    );
    let Some(current) = current else {
        return Err(recording_required(
            &proposed.name,
            "(it does not exist yet)",
        ));
    };
    // A guarded write runs a replay, and shares the replays' limits
    // (docs/tuning.md, "The guarded PUT"): without them one project's
    // guarded writes would queue every project's previews behind theirs.
    state.preview.admit(project_id)?;
    let permit = state.simulations.try_start(project_id)?;
    let recorded = load(state, project_id, &proposed.name, window).await?;
    if recorded.arrivals == 0 {
        return Err(recording_required(&proposed.name, "in the last hour"));
    }
    let _running = state.preview.running().await?;
    let seconds = GUARD_WINDOW.num_seconds() as f64;
    let comparison = replay(
        (current, proposed.clone()),
        tier.clone(),
        recorded.events,
        seconds,
        deadline,
        Some(permit),
    )
    .await?;
    let verdict = check_guard(&comparison, &guard.figures, guard.tolerance);
    if verdict.passed {
        tracing::info!(project_id, game_mode = %proposed.name, arrivals = recorded.arrivals, "config guard passed");
        Ok(())
    } else {
        Err(regression(verdict))
    }
}
