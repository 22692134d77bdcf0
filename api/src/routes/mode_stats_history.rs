//! `GET /v1/projects/{projectId}/game-modes/{name}/stats/history`: the mode's
//! figures over time, in buckets of `bucketSeconds` (a multiple of 60,
//! aligned on multiples of it since the Unix epoch), added up from the
//! minutes the worker stored (kept 14 days). A bucket without a stored
//! minute (no searches, no matches) is left out. Each bucket carries, per
//! rule over attributes (docs/rules.md), the candidates the rule turned
//! away in the bucket's cycles (`ruleTurnedAway`), and in a mode with
//! `composition`, per role seat the players matched in it and their waits
//! (`roles`, docs/rules.md, "Role waits"). API key of the project.

use crate::auth::ProjectCaller;
use crate::extract::ApiQuery;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_matchmaker::histogram::{SPREAD_BOUNDS, WAIT_BOUNDS};
use matchplane_store::repos::game_modes;
use matchplane_store::repos::stats_history::{self, Figures, RETENTION_DAYS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};

/// Query of the history.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct HistoryQuery {
    /// Start (RFC 3339; default: an hour before `to`). Older than 14 days
    /// before now is cut to it.
    #[serde(default, deserialize_with = "crate::params::date_time")]
    pub from: Option<DateTime<Utc>>,
    /// End, exclusive (RFC 3339; default: now).
    #[serde(default, deserialize_with = "crate::params::date_time")]
    pub to: Option<DateTime<Utc>>,
    /// Bucket length in seconds: a multiple of 60, from 60 to 86 400
    /// (default 60).
    #[param(value_type = Option<i64>, minimum = 60, maximum = 86400, multiple_of = 60)]
    pub bucket_seconds: Option<crate::params::BucketSeconds>,
}

/// Percentiles estimated from a bucket's histogram (each within one
/// histogram bucket of the exact figure).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"p50": 2.1, "p90": 6.5, "p99": 14.0}))]
pub struct HistoryPercentiles {
    /// Median.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    pub p50: f64,
    /// 90th percentile.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    pub p90: f64,
    /// 99th percentile.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    pub p99: f64,
}

/// One bucket of the history.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"start": "2026-12-01T10:00:00.000Z", "cycles": 60, "searching": 42, "searchingMax": 51, "matches": 30, "matchedPlayers": 60, "waitSeconds": {"p50": 2.1, "p90": 6.5, "p99": 14.0}, "mmrSpread": {"p50": 40.0, "p90": 95.0, "p99": 180.0}, "proposals": 0, "declines": 0, "ruleTurnedAway": {"same-build": 120, "level": 18}}))]
#[serde(rename_all = "camelCase")]
pub struct HistoryBucket {
    /// Start of the bucket.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub start: DateTime<Utc>,
    /// Cycles that ran with searches or matches.
    pub cycles: i64,
    /// Mean pool size over those cycles (rounded).
    pub searching: i64,
    /// Largest pool of the bucket.
    pub searching_max: i64,
    /// Matches made.
    pub matches: i64,
    /// Players seated in them.
    pub matched_players: i64,
    /// Matched players' waits (seconds); `null` without matches.
    pub wait_seconds: Option<HistoryPercentiles>,
    /// The matches' MMR spread (max minus min member MMR); `null` without
    /// matches.
    pub mmr_spread: Option<HistoryPercentiles>,
    /// Match proposals opened (modes with acceptance).
    pub proposals: i64,
    /// Proposals declined or timed out.
    pub declines: i64,
    /// Per rule over attributes (docs/rules.md), the candidates it turned
    /// away, added up over the bucket's cycles (each cycle counts a
    /// candidate once per rule, however many tried it): the rule that
    /// costs the most wait time has the largest count. Rules that turned
    /// nobody away are left out; absent when none did (every bucket of a
    /// mode without rules).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(example = json!({"same-build": 120, "level": 18}))]
    pub rule_turned_away: BTreeMap<String, i64>,
    /// Per role seat of a mode with `composition` (docs/rules.md, "Role
    /// waits"): the players matched in it in the bucket and their waits.
    /// Roles nobody was matched in are left out; absent when none was
    /// (every bucket of a mode without `composition`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(example = json!({"tank": {"matched": 4, "waitSeconds": {"p50": 20.5, "p90": 41.0}}}))]
    pub roles: BTreeMap<String, super::role_stats::RoleStats>,
}

/// The history of a mode.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"gameMode": "duel", "from": "2026-12-01T09:00:00.000Z", "to": "2026-12-01T10:00:00.000Z", "bucketSeconds": 60, "buckets": [{"start": "2026-12-01T09:41:00.000Z", "cycles": 60, "searching": 42, "searchingMax": 51, "matches": 30, "matchedPlayers": 60, "waitSeconds": {"p50": 2.1, "p90": 6.5, "p99": 14.0}, "mmrSpread": {"p50": 40.0, "p90": 95.0, "p99": 180.0}, "proposals": 0, "declines": 0, "ruleTurnedAway": {"same-build": 120}}]}))]
#[serde(rename_all = "camelCase")]
pub struct StatsHistory {
    /// The game mode's name.
    pub game_mode: String,
    /// Start of the range served (after cutting to the retention).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub from: DateTime<Utc>,
    /// End of the range served (exclusive).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub to: DateTime<Utc>,
    /// Bucket length (seconds).
    pub bucket_seconds: i64,
    /// Buckets with figures, oldest first.
    pub buckets: Vec<HistoryBucket>,
}

/// The mode's figures over time.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/stats/history", tag = "game-modes", operation_id = "getGameModeStatsHistory",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), HistoryQuery),
    responses((status = 200, body = StatsHistory), (status = 400, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn history(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<HistoryQuery>,
) -> Result<Json<StatsHistory>, ApiError> {
    let bucket = crate::params::BucketSeconds::or_default(query.bucket_seconds);
    let now = Utc::now();
    let to = query.to.unwrap_or(now);
    let from = query.from.unwrap_or(to - TimeDelta::hours(1));
    if from >= to {
        return Err(crate::routes::replay::window_backwards(from, to));
    }
    let from = from.max(now - TimeDelta::days(RETENTION_DAYS));
    game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let rows = if from < to {
        stats_history::minutes(&state.db, &project_id, &name, from, to).await?
    } else {
        Vec::new()
    };
    let mut buckets: BTreeMap<i64, Figures> = BTreeMap::new();
    for row in &rows {
        let secs = row.minute.timestamp();
        let start = secs - secs.rem_euclid(bucket);
        buckets
            .entry(start)
            .or_default()
            .merge(&Figures::of_row(row));
    }
    let buckets = buckets
        .into_iter()
        .filter_map(|(start, f)| Some(bucket_of(DateTime::from_timestamp(start, 0)?, &f)))
        .collect();
    Ok(Json(StatsHistory {
        game_mode: name,
        from,
        to,
        bucket_seconds: bucket,
        buckets,
    }))
}

fn bucket_of(start: DateTime<Utc>, f: &Figures) -> HistoryBucket {
    let percentiles = |h: &matchplane_matchmaker::histogram::Histogram, bounds: &[f64]| {
        Some(HistoryPercentiles {
            p50: round(h.quantile(bounds, 0.50)?),
            p90: round(h.quantile(bounds, 0.90)?),
            p99: round(h.quantile(bounds, 0.99)?),
        })
    };
    HistoryBucket {
        start,
        cycles: f.cycles,
        searching: if f.cycles > 0 {
            (f.searching_sum as f64 / f.cycles as f64).round() as i64
        } else {
            0
        },
        searching_max: f.searching_max,
        matches: f.matches,
        matched_players: f.matched_players,
        wait_seconds: percentiles(&f.waits, WAIT_BOUNDS),
        mmr_spread: percentiles(&f.spreads, SPREAD_BOUNDS),
        proposals: f.proposals,
        declines: f.declines,
        rule_turned_away: f.rule_turned_away.clone(),
        roles: super::role_stats::of(&f.roles),
    }
}

/// Two decimals: the estimates are not finer than that.
fn round(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}
