//! `GET /v1/projects/{projectId}/game-modes/{name}/stats` (docs/api-tour.md): the last
//! cycle's figures as the worker stored them (searching, candidates,
//! duration) and the recent matches' figures from the matches table
//! (matches in the last minute, wait-time percentiles), and the searches
//! waiting now (`stillWaiting`, and their waits so far in
//! `waitSecondsAll`), so a config that strands players does not look good
//! for counting only those it matched; with a `backfill` block, the open
//! backfill requests and the last hour's fills (`backfill`); the measured
//! cycle period (`cyclePeriodSeconds`) and the mode's hold (`hold`); per
//! rule over attributes (docs/rules.md), the candidates it turned away at
//! the last cycle (`ruleTurnedAway`, as the pool view has it) and in the
//! last hour (`ruleTurnedAwayLastHour`, added up from the stats history's
//! minutes, as `…/stats/history` serves them); in a mode with
//! `composition`, per role seat the players matched in it and their waits
//! over the last hour (`roles`, docs/rules.md, "Role waits"). API key of
//! the project.

use super::mode_pool::every_rule;
use crate::auth::ProjectCaller;
use crate::play::unix_now;
use crate::problem::{ApiError, Problem};
use crate::routes::webhook_status::WebhookStatus;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Duration, Utc};
use matchplane_matchmaker::pool_summary::PoolSummary;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::stats_history::{self, Figures};
use matchplane_store::repos::{backfills, cycle_stats, game_modes, matches, webhook_health};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Matches whose waits make the percentiles: those of the last hour, at most
/// this many (the newest).
const WAIT_SAMPLE: u64 = 1000;

/// Matches and proposals whose lifecycle makes the acceptance figures:
/// those of the last hour, at most this many (the newest).
const LIFECYCLE_SAMPLE: u64 = 10_000;

/// Wait-time percentiles (seconds from `queuedAt` to the matching cycle).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"p50": 2.1, "p90": 6.5, "p99": 14.0}))]
pub struct WaitPercentiles {
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

/// A mode's backfill figures: open requests now, and the fills
/// of the last hour (newest 1 000).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"open": 2, "fillsLastHour": 14, "seatsFilledLastHour": 17, "timeToFillSeconds": {"p50": 1.2, "p90": 4.8, "p99": 9.6}}))]
#[serde(rename_all = "camelCase")]
pub struct BackfillFigures {
    /// Backfill requests open now.
    pub open: u64,
    /// Fills in the last hour.
    pub fills_last_hour: u64,
    /// Seats those fills took (players).
    pub seats_filled_last_hour: u64,
    /// Each of those seats' time from its request's opening to the fill
    /// that took it (seconds); absent when there were none.
    pub time_to_fill_seconds: Option<WaitPercentiles>,
}

/// A mode's figures.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"gameMode": "duel", "searchingNow": 12, "candidates": 12, "matchesLastMinute": 30, "waitSeconds": {"p50": 2.1, "p90": 6.5, "p99": 14.0}, "stillWaiting": 12, "waitSecondsAll": {"p50": 2.4, "p90": 7.0, "p99": 15.2}, "webhookStatus": {"failing": false, "since": null, "lastError": null, "consecutiveFailures": 0, "lastFailureAt": null, "lastSuccessAt": "2026-12-01T09:59:58.000Z"}, "lastCycleDurationMs": 1.8, "lastCycleAt": "2026-12-01T10:00:00.000Z", "cyclePeriodSeconds": 1.002, "hold": null, "lifecycle": {"proposals": 0, "proposalsOpen": 0, "proposalsMade": 0, "proposalsCancelled": 0, "accepts": 0, "declines": 0, "timeouts": 0, "acceptanceRate": null, "releases": 0, "unassigned": 0}, "ruleTurnedAway": {"same-build": 2, "level": 0}, "ruleTurnedAwayLastHour": {"same-build": 1440, "level": 35}}))]
#[serde(rename_all = "camelCase")]
pub struct ModeStats {
    /// The game mode's name.
    pub game_mode: String,
    /// Searches in the pool at the last cycle (0 before the first).
    pub searching_now: i64,
    /// Candidates (complete, eligible parties) at the last cycle.
    pub candidates: i64,
    /// Matches made in the last 60 seconds.
    pub matches_last_minute: u64,
    /// Wait of the players matched in the last hour (newest 1 000 matches);
    /// absent when there were none.
    pub wait_seconds: Option<WaitPercentiles>,
    /// Searches waiting in the pool now.
    pub still_waiting: u64,
    /// Wait of the players matched in the last hour (as `waitSeconds`)
    /// together with the searches still waiting, each counted with its
    /// wait so far (censored at now); absent when there are neither.
    pub wait_seconds_all: Option<WaitPercentiles>,
    /// Duration of the last cycle, snapshot to last claim (milliseconds).
    pub last_cycle_duration_ms: Option<f64>,
    /// When the last cycle ended.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::option::serialize")]
    pub last_cycle_at: Option<DateTime<Utc>>,
    /// The measured period of the mode's cycles: seconds from the start of
    /// one cycle to the start of the next, as the worker last measured it
    /// (`matchmakingCycleDurationSeconds` after the previous cycle ended,
    /// so the period is that pause plus a cycle's duration;
    /// docs/game-modes.md). `null` before two cycles ran in a row.
    pub cycle_period_seconds: Option<f64>,
    /// The mode's hold (docs/game-modes.md, "Holding matching"): since when and by whom;
    /// `null` when its matching is not held.
    pub hold: Option<crate::routes::mode_hold::ModeHold>,
    /// Whether the mode's webhook deliveries are failing; `null` when the
    /// mode has no webhook.
    pub webhook_status: Option<WebhookStatus>,
    /// Backfill figures; absent when the mode has no `backfill` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill: Option<BackfillFigures>,
    /// The last hour's proposals (acceptance) and releases.
    pub lifecycle: Lifecycle,
    /// Per rule over attributes (docs/rules.md), the candidates it turned
    /// away at the last cycle, every rule of the mode listed (as the pool
    /// view's `ruleTurnedAway`); `{}` for a mode without rules, before its
    /// first cycle and after a cycle over an empty pool.
    pub rule_turned_away: BTreeMap<String, u64>,
    /// Per rule, the candidates it turned away in the cycles of the
    /// minutes that started in the last hour, added up from the stats
    /// history (`ruleTurnedAway` of `…/stats/history`: each cycle counts
    /// a candidate once per rule). Rules that turned nobody away are left
    /// out; `{}` for a mode without rules.
    pub rule_turned_away_last_hour: BTreeMap<String, i64>,
    /// In a mode with `composition` (docs/rules.md, "Role waits"): per role
    /// seat (each role of the composition, and `any` once taken), the
    /// players matched in it in the minutes that started in the last hour
    /// and their waits, from the stats history. Absent without
    /// `composition`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, example = json!({"tank": {"matched": 40, "waitSeconds": {"p50": 20.5, "p90": 41.0}}, "damage": {"matched": 80, "waitSeconds": {"p50": 184.0, "p90": 290.0}}}))]
    pub roles: Option<BTreeMap<String, super::role_stats::RoleStats>>,
}

/// The last hour's match lifecycle figures (newest 10 000 matches and
/// proposals): proposals and how they ended, the answers given, and
/// releases.
#[derive(Debug, Default, Serialize, ToSchema)]
#[schema(example = json!({"proposals": 10, "proposalsOpen": 1, "proposalsMade": 7, "proposalsCancelled": 2, "accepts": 17, "declines": 1, "timeouts": 1, "acceptanceRate": 0.778, "releases": 1, "unassigned": 0}))]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Proposals opened.
    pub proposals: u64,
    /// Of which still open.
    pub proposals_open: u64,
    /// Of which made into matches (released since included).
    pub proposals_made: u64,
    /// Of which cancelled.
    pub proposals_cancelled: u64,
    /// Players who accepted (in closed proposals).
    pub accepts: u64,
    /// Players who declined, cancelled or closed their socket.
    pub declines: u64,
    /// Players silent at the deadline.
    pub timeouts: u64,
    /// `proposalsMade / (proposalsMade + proposalsCancelled)`; `null`
    /// before any proposal closed.
    pub acceptance_rate: Option<f64>,
    /// Made matches the studio released.
    pub releases: u64,
    /// Made matches released for want of an assignment.
    pub unassigned: u64,
}

impl Lifecycle {
    /// The figures of `rows` (status, answers).
    pub fn of(rows: &[(String, Option<Value>)]) -> Self {
        use matchplane_store::repos::match_status::{CANCELLED, PROPOSED, RELEASED, UNASSIGNED};
        let mut out = Lifecycle::default();
        for (status, answers) in rows {
            match status.as_str() {
                RELEASED => out.releases += 1,
                UNASSIGNED => out.unassigned += 1,
                _ => {}
            }
            let Some(answers) = answers.as_ref().and_then(Value::as_object) else {
                continue;
            };
            out.proposals += 1;
            match status.as_str() {
                PROPOSED => {
                    out.proposals_open += 1;
                    continue;
                }
                CANCELLED => out.proposals_cancelled += 1,
                _ => {
                    out.proposals_made += 1;
                    out.accepts += answers.len() as u64;
                    continue;
                }
            }
            for answer in answers.values().filter_map(Value::as_str) {
                match answer {
                    "accepted" => out.accepts += 1,
                    "declined" => out.declines += 1,
                    "timeout" => out.timeouts += 1,
                    _ => {}
                }
            }
        }
        let closed = out.proposals_made + out.proposals_cancelled;
        out.acceptance_rate = (closed > 0)
            .then(|| ((out.proposals_made as f64 / closed as f64) * 1000.0).round() / 1000.0);
        out
    }
}

/// The mode's live figures.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/stats", tag = "game-modes", operation_id = "getGameModeStats",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    responses((status = 200, body = ModeStats), (status = 404, body = Problem)))]
pub async fn stats(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
) -> Result<Json<ModeStats>, ApiError> {
    let mode = game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let webhook_status = if mode.config.get("webhook").is_some_and(Value::is_object) {
        let health = webhook_health::get(&state.db, &project_id, &name).await?;
        Some(WebhookStatus::from_health(health.as_ref()))
    } else {
        None
    };
    let now = Utc::now();
    // Windows start no earlier than the mode: the matches of a deleted
    // mode of the same name are not this mode's (docs/game-modes.md).
    let since = |window: Duration| (now - window).max(mode.created_at);
    let backfill = if mode.config.get("backfill").is_some_and(Value::is_object) {
        let since = since(Duration::hours(1));
        let f = backfills::figures(&state.db, &project_id, &name, since, now, WAIT_SAMPLE).await?;
        Some(BackfillFigures {
            open: f.open,
            fills_last_hour: f.fills,
            seats_filled_last_hour: f.seats_filled,
            time_to_fill_seconds: percentiles(&f.time_to_fill),
        })
    } else {
        None
    };
    let last = cycle_stats::get(&state.db, &project_id, &name)
        .await?
        .filter(|row| row.ran_at >= mode.created_at);
    let matches_last_minute =
        matches::count_since(&state.db, &project_id, &name, since(Duration::seconds(60))).await?;
    let recent = matches::recent(
        &state.db,
        &project_id,
        &name,
        since(Duration::hours(1)),
        WAIT_SAMPLE,
    )
    .await?;
    let mut waits: Vec<f64> = recent
        .iter()
        .flat_map(|m| matchplane_store::repos::matches::players_of(&m.teams))
        .filter_map(|p| p.get("waitSeconds")?.as_f64())
        .collect();
    waits.sort_by(f64::total_cmp);
    // The live pool, read now (one round trip): a studio's dashboard read,
    // not a hot path.
    let waiting = state
        .play
        .pool
        .snapshot(&ModeKey::new(&project_id, &name))
        .await?;
    let lifecycle = matches::lifecycle_since(
        &state.db,
        &project_id,
        &name,
        since(Duration::hours(1)),
        LIFECYCLE_SAMPLE,
    )
    .await?;
    let has_rules = mode
        .config
        .get("rules")
        .and_then(Value::as_array)
        .is_some_and(|rules| !rules.is_empty());
    let has_composition = mode.config.get("composition").is_some_and(Value::is_object);
    let hour = if has_rules || has_composition {
        stats_history::minutes(
            &state.db,
            &project_id,
            &name,
            now - Duration::hours(1),
            now + Duration::minutes(1),
        )
        .await?
        .iter()
        .fold(Figures::default(), |mut hour, row| {
            hour.merge(&Figures::of_row(row));
            hour
        })
    } else {
        Figures::default()
    };
    let roles = super::role_stats::of_mode(&mode.config, &hour.roles);
    let rule_turned_away_last_hour = every_rule(&mode.config, hour.rule_turned_away);
    let rule_turned_away = last
        .as_ref()
        .and_then(|row| row.pool_summary.as_deref())
        .and_then(|json| serde_json::from_str::<PoolSummary>(json).ok())
        .map(|summary| summary.rule_turned_away)
        .unwrap_or_default();
    let rule_turned_away = every_rule(&mode.config, rule_turned_away);
    let now_unix = unix_now();
    let mut all = waits.clone();
    all.extend(waiting.iter().map(|s| (now_unix - s.queued_at).max(0.0)));
    all.sort_by(f64::total_cmp);
    Ok(Json(ModeStats {
        game_mode: name,
        searching_now: last.as_ref().map_or(0, |s| s.pool_size),
        candidates: last.as_ref().map_or(0, |s| s.candidates),
        matches_last_minute,
        wait_seconds: percentiles(&waits),
        still_waiting: waiting.len() as u64,
        wait_seconds_all: percentiles(&all),
        last_cycle_duration_ms: last.as_ref().map(|s| s.duration_ms),
        cycle_period_seconds: last
            .as_ref()
            .and_then(|s| s.period_seconds)
            .map(|p| (p * 1000.0).round() / 1000.0),
        last_cycle_at: last.map(|s| s.ran_at),
        hold: matchplane_store::repos::mode_holds::Hold::of(&mode).map(Into::into),
        webhook_status,
        backfill,
        lifecycle: Lifecycle::of(&lifecycle),
        rule_turned_away,
        rule_turned_away_last_hour,
        roles,
    }))
}

/// Nearest-rank percentiles of sorted `waits`.
fn percentiles(waits: &[f64]) -> Option<WaitPercentiles> {
    if waits.is_empty() {
        return None;
    }
    let rank = |p: f64| {
        let index = ((p * waits.len() as f64).ceil() as usize).clamp(1, waits.len()) - 1;
        waits.get(index).copied()
    };
    Some(WaitPercentiles {
        p50: rank(0.50)?,
        p90: rank(0.90)?,
        p99: rank(0.99)?,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn lifecycle_figures_count_each_outcome_and_answer() {
        use serde_json::json;
        let rows = vec![
            ("made".to_owned(), None),
            ("released".to_owned(), None),
            ("made".to_owned(), Some(json!({"a": "none", "b": "none"}))),
            (
                "cancelled".to_owned(),
                Some(json!({"c": "accepted", "d": "declined"})),
            ),
            (
                "cancelled".to_owned(),
                Some(json!({"e": "timeout", "f": "accepted"})),
            ),
            ("proposed".to_owned(), Some(json!({"g": "none"}))),
            ("unassigned".to_owned(), Some(json!({"h": "none"}))),
        ];
        let f = super::Lifecycle::of(&rows);
        assert_eq!(
            (
                f.proposals,
                f.proposals_open,
                f.proposals_made,
                f.proposals_cancelled
            ),
            (5, 1, 2, 2)
        );
        assert_eq!((f.accepts, f.declines, f.timeouts), (5, 1, 1));
        assert_eq!((f.releases, f.unassigned), (1, 1));
        assert_eq!(f.acceptance_rate, Some(0.5));
        assert_eq!(super::Lifecycle::of(&[]).acceptance_rate, None);
    }

    #[test]
    fn nearest_rank() {
        let waits: Vec<f64> = (1..=100).map(f64::from).collect();
        let p = super::percentiles(&waits).unwrap();
        assert_eq!((p.p50, p.p90, p.p99), (50.0, 90.0, 99.0));
        assert!(super::percentiles(&[]).is_none());
    }
}
