//! `GET /v1/projects/{projectId}/game-modes/{name}/pool`: the mode's pool as
//! its last cycle saw it: searches, candidates, how many wait for each
//! reason, and histograms of MMR and latency. The worker sums the pool up at
//! each cycle and stores it with the cycle's figures, so this route reads
//! one row, never the pool. API key of the project.

use crate::auth::ProjectCaller;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::pool_summary::{Bins, PoolSummary};
use matchplane_store::repos::{cycle_stats, game_modes};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Equal-width bins: `counts[i]` holds values in
/// `[start + i*width, start + (i+1)*width)`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"start": 1400.0, "width": 25.0, "counts": [3, 9, 14, 6]}))]
pub struct PoolBins {
    /// Lower edge of the first bin.
    pub start: f64,
    /// Width of every bin (MMR points or milliseconds).
    pub width: f64,
    /// Searches per bin.
    pub counts: Vec<u64>,
}

impl From<Bins> for PoolBins {
    fn from(b: Bins) -> Self {
        Self {
            start: b.start,
            width: b.width,
            counts: b.counts,
        }
    }
}

/// The live pool of a mode.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"gameMode": "duel", "at": "2026-12-01T10:00:00.000Z", "searching": 32, "candidates": 30, "matched": 4, "waitingReasons": {"NO_CANDIDATES_IN_RANGE": 20, "PARTY_INCOMPLETE": 2}, "waitingByRule": {}, "ruleTurnedAway": {}, "waitingByRole": {}, "mmr": {"start": 1400.0, "width": 25.0, "counts": [3, 9, 14, 6]}, "latencyMs": null}))]
#[serde(rename_all = "camelCase")]
pub struct PoolView {
    /// The game mode's name.
    pub game_mode: String,
    /// When the cycle that saw this pool ended; `null` before the first.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub at: Option<DateTime<Utc>>,
    /// Searches in the pool.
    pub searching: u64,
    /// Candidates (complete, eligible parties).
    pub candidates: u64,
    /// Searches that cycle matched.
    pub matched: u64,
    /// Searches left waiting, by waiting-reason code.
    pub waiting_reasons: BTreeMap<String, u64>,
    /// Searches left waiting with `RULE_NOT_MET`, by the rule named
    /// (docs/rules.md); empty without rules.
    pub waiting_by_rule: BTreeMap<String, u64>,
    /// Per rule over attributes, the candidates it turned away in that
    /// cycle (docs/rules.md): a rule that costs wait time shows here.
    pub rule_turned_away: BTreeMap<String, u64>,
    /// Searches left waiting by each role they listed, in a mode with
    /// `composition` (docs/rules.md, "Role queues"); empty otherwise.
    pub waiting_by_role: BTreeMap<String, u64>,
    /// MMR of the searches that have one; `null` when none has.
    pub mmr: Option<PoolBins>,
    /// Latency in milliseconds (measured ping, else the best region's);
    /// `null` when none has one.
    pub latency_ms: Option<PoolBins>,
}

/// The mode's pool as its last cycle saw it.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/pool", tag = "game-modes", operation_id = "getGameModePool",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = PoolView), (status = 404, body = Problem)))]
pub async fn pool(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
) -> Result<Json<PoolView>, ApiError> {
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let last = cycle_stats::get(&state.db, &project_id, &name).await?;
    let summary: Option<PoolSummary> = last
        .as_ref()
        .and_then(|row| row.pool_summary.as_deref())
        .and_then(|json| serde_json::from_str(json).ok());
    let at = last.as_ref().map(|row| row.ran_at);
    Ok(Json(match summary {
        Some(s) => PoolView {
            game_mode: name,
            at,
            searching: s.searching,
            candidates: s.candidates,
            matched: s.matched,
            waiting_reasons: s.waiting_reasons,
            waiting_by_rule: s.waiting_by_rule,
            rule_turned_away: every_rule(&mode.config, s.rule_turned_away),
            waiting_by_role: s.waiting_by_role,
            mmr: s.mmr.map(PoolBins::from),
            latency_ms: s.latency_ms.map(PoolBins::from),
        },
        None => PoolView {
            game_mode: name,
            at,
            searching: last.as_ref().map_or(0, |r| r.pool_size.max(0) as u64),
            candidates: last.as_ref().map_or(0, |r| r.candidates.max(0) as u64),
            matched: 0,
            waiting_reasons: BTreeMap::new(),
            waiting_by_rule: BTreeMap::new(),
            rule_turned_away: every_rule(&mode.config, BTreeMap::new()),
            waiting_by_role: BTreeMap::new(),
            mmr: None,
            latency_ms: None,
        },
    }))
}

/// `counts` with every rule of the mode's `config` listed, at 0 where it
/// holds none (docs/rules.md, "Which rule costs wait time"): so before the
/// first cycle, or after one over an empty pool, a mode with rules still
/// lists them; a rule renamed keeps its old name's counts beside.
pub(super) fn every_rule<T: Default>(
    config: &serde_json::Value,
    mut counts: BTreeMap<String, T>,
) -> BTreeMap<String, T> {
    let rules = config.get("rules").and_then(serde_json::Value::as_array);
    for rule in rules.into_iter().flatten() {
        if let Some(name) = rule.get("name").and_then(serde_json::Value::as_str) {
            counts.entry(name.to_owned()).or_default();
        }
    }
    counts
}
