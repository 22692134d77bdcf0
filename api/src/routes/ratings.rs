//! Ratings (Glicko-2) of a game mode: `POST …/game-modes/{name}/results`,
//! `GET/PUT …/game-modes/{name}/ratings/{playerId}`,
//! `GET …/game-modes/{name}/leaderboard`. API key of the project.
//!
//! The maths is the matching core's ([`matchplane_matchmaker::ratings`]);
//! the store applies a report in one transaction. Idle deviation growth is
//! computed whenever a rating is read or used: whole rating periods since
//! the player's last update, capped at the mode's `initialDeviation`.

use crate::auth::ProjectCaller;
use crate::extract::{parse_value, ApiQuery, RawJson};
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::ratings::{
    rate_report, MatchReport, Rating, RatingsConfig, ReportError,
};
use matchplane_matchmaker::{Code, FieldError, GameModeConfig};
use matchplane_store::entities::{game_mode, rating};
use matchplane_store::repos::game_modes;
use matchplane_store::repos::ratings::{self, ApplyError, ReportScope};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use utoipa::{IntoParams, ToSchema};

/// A player's rating as answered.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"playerId": "ana", "rating": 1562.3, "deviation": 290.3, "volatility": 0.06, "games": 1, "conservative": 981.7}))]
#[serde(rename_all = "camelCase")]
pub struct RatingView {
    /// The player.
    pub player_id: String,
    /// r (Glicko scale, 1500 = a new player).
    pub rating: f64,
    /// RD, with idle growth up to now.
    pub deviation: f64,
    /// σ.
    pub volatility: f64,
    /// Rated reports the player took part in.
    pub games: i64,
    /// `rating - 2 * deviation`: what the leaderboard orders by.
    pub conservative: f64,
}

/// `PUT …/ratings/{playerId}` body: a rating the studio already has.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"rating": 1720, "deviation": 80, "volatility": 0.06}))]
#[serde(deny_unknown_fields)]
pub struct RatingImport {
    /// r, finite.
    #[schema(minimum = -1e9, maximum = 1e9)]
    pub rating: f64,
    /// RD, finite, > 0 and at most the mode's `initialDeviation`.
    #[schema(exclusive_minimum = 0)]
    pub deviation: f64,
    /// σ, finite, > 0 and at most 10.
    #[schema(exclusive_minimum = 0, maximum = 10)]
    pub volatility: f64,
}

/// The ratings a report changed.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0", "ratings": [{"playerId": "ana", "rating": 1662.3, "deviation": 290.3, "volatility": 0.06, "games": 1, "conservative": 1081.7}, {"playerId": "ben", "rating": 1337.7, "deviation": 290.3, "volatility": 0.06, "games": 1, "conservative": 757.1}]}))]
#[serde(rename_all = "camelCase")]
pub struct ResultApplied {
    /// The report's match id.
    pub match_id: String,
    /// New ratings of the rated players.
    pub ratings: Vec<RatingView>,
}

/// Leaderboard query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LeaderboardQuery {
    /// Rows per page, 1..=200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<crate::params::PageLimit>,
    /// `nextCursor` of the previous page.
    #[param(pattern = "^[0-9]{1,18}$")]
    pub cursor: Option<String>,
}

/// A leaderboard page.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"items": [{"playerId": "ana", "rating": 1662.3, "deviation": 290.3, "volatility": 0.06, "games": 1, "conservative": 1081.7}]}))]
#[serde(rename_all = "camelCase")]
pub struct LeaderboardPage {
    /// Best conservative rating first.
    pub items: Vec<RatingView>,
    /// Cursor of the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The mode and its ratings block, or 422 when ratings are off.
async fn rated_mode(
    state: &AppState,
    project_id: &str,
    name: &str,
) -> Result<(game_mode::Model, RatingsConfig), ApiError> {
    let mode = game_modes::get(&state.db, project_id, name)
        .await
        .map_err(super::mode_error(name))?;
    let config: GameModeConfig =
        serde_json::from_value(mode.config.clone()).map_err(|e| ApiError::internal(&e))?;
    match config.ratings {
        Some(r) if r.enabled => Ok((mode, r)),
        _ => Err(ApiError::invalid(vec![FieldError::new(
            "ratings",
            Code::ValidationError,
            format!("ratings are not enabled for game mode {name}: add a `ratings` block"),
        )])),
    }
}

fn initial(config: &RatingsConfig) -> Rating {
    Rating {
        rating: config.initial_rating,
        deviation: config.initial_deviation,
        volatility: config.initial_volatility,
    }
}

/// The row's rating with idle growth: whole periods since `rated_at`.
pub fn current(row: &rating::Model, config: &RatingsConfig, now: DateTime<Utc>) -> Rating {
    let idle = (now - row.rated_at).num_milliseconds().max(0) as f64 / 1000.0;
    let periods = (idle / config.rating_period_seconds).floor();
    ratings::as_rating(row).idle(periods, config.initial_deviation)
}

fn view(player_id: &str, value: Rating, games: i64) -> RatingView {
    RatingView {
        player_id: player_id.to_owned(),
        rating: value.rating,
        deviation: value.deviation,
        volatility: value.volatility,
        games,
        conservative: value.rating - 2.0 * value.deviation,
    }
}

/// Applies a result report to the mode's ratings (one rating period).
#[utoipa::path(post, path = "/v1/projects/{projectId}/game-modes/{name}/results", tag = "ratings", operation_id = "reportResult",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name")),
    request_body = MatchReport,
    responses(
        (status = 200, body = ResultApplied),
        (status = 404, description = "GAME_MODE_NOT_FOUND: the project has no game mode `{name}`; NOT_FOUND: no such project, or no such match in it (`matchId`)", body = Problem),
        (status = 409, description = "RESULT_ALREADY_REPORTED", body = Problem),
        (status = 422, description = "Malformed report, ratings off, a match that is not `made` (a proposal, cancelled, released, unassigned), a match of another mode or of a deleted mode of the same name, or players not in the match (`teams[i].players[j]`)", body = Problem)))]
pub async fn report_result(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    RawJson(body): RawJson,
) -> Result<Json<ResultApplied>, ApiError> {
    let (mode, config) = rated_mode(&state, &project_id, &name).await?;
    let report: MatchReport = parse_value(body)?;
    let problems = report.validate();
    if !problems.is_empty() {
        return Err(ApiError::invalid(problems));
    }
    super::report_match::check(&state.db, &project_id, (&name, mode.created_at), &report).await?;
    let players: Vec<String> = report.players().cloned().collect();
    let now = Utc::now();
    let scope = ReportScope {
        project_id: &project_id,
        game_mode_id: &mode.id,
        match_id: &report.match_id,
        players: &players,
        initial: initial(&config),
        now,
    };
    let applied = ratings::apply_report(&state.db, scope, |rows| {
        let before: HashMap<String, Rating> = rows
            .iter()
            .map(|(p, row)| (p.clone(), current(row, &config, now)))
            .collect();
        rate_report(&report, &before, config.tau)
    })
    .await;
    let rows = match applied {
        Ok(rows) => rows,
        Err(ApplyError::AlreadyReported) => {
            return Err(ApiError::new(
                Code::ResultAlreadyReported,
                format!("match {} was already reported for {name}", report.match_id),
            ))
        }
        // Released while the report was checked: never played.
        Err(ApplyError::NotMade) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "matchId",
                Code::ValidationError,
                format!(
                    "match {} is no longer made: only a match that was played is rated",
                    report.match_id
                ),
            )]))
        }
        Err(ApplyError::Rating(ReportError::Invalid(errors))) => {
            return Err(ApiError::invalid(errors))
        }
        Err(ApplyError::Rating(ReportError::Rating { player, source })) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "teams",
                Code::ValidationError,
                format!("the rating of {player} cannot be updated: {source}"),
            )]))
        }
        Err(ApplyError::Store(e)) => return Err(e.into()),
    };
    tracing::info!(project_id = %project_id, game_mode = %name, players = rows.len(), "result applied");
    Ok(Json(ResultApplied {
        match_id: report.match_id,
        ratings: rows
            .iter()
            .map(|r| view(&r.player_id, ratings::as_rating(r), r.games))
            .collect(),
    }))
}

/// A player's rating in the mode (the initial rating if never rated).
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}", tag = "ratings", operation_id = "getRating",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), ("playerId" = String, Path, description = "Player id (1 to 128 printable characters)", min_length = 1, max_length = 128)),
    responses((status = 200, body = RatingView), (status = 404, body = Problem),
        (status = 422, description = "VALIDATION_ERROR: the player id is not 1 to 128 printable characters, the mode has no ratings, or a query parameter the route does not take", body = Problem)))]
pub async fn get_rating(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name, player_id)): Path<(String, String, String)>,
) -> Result<Json<RatingView>, ApiError> {
    let (mode, config) = rated_mode(&state, &project_id, &name).await?;
    super::players::check_player_id(&player_id)?;
    let out = match ratings::get(&state.db, &mode.id, &player_id).await? {
        Some(row) => view(&player_id, current(&row, &config, Utc::now()), row.games),
        None => view(&player_id, initial(&config), 0),
    };
    Ok(Json(out))
}

/// Imports a rating the studio already has (game count kept).
#[utoipa::path(put, path = "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}", tag = "ratings", operation_id = "putRating",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), ("playerId" = String, Path, description = "Player id (1 to 128 printable characters)", min_length = 1, max_length = 128)),
    request_body = RatingImport,
    responses((status = 200, body = RatingView), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn put_rating(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name, player_id)): Path<(String, String, String)>,
    RawJson(body): RawJson,
) -> Result<Json<RatingView>, ApiError> {
    let (mode, config) = rated_mode(&state, &project_id, &name).await?;
    let import: RatingImport = parse_value(body)?;
    let mut errors = Vec::new();
    if !matchplane_matchmaker::ticket::is_valid_player_id(&player_id) {
        errors.push(super::players::player_id_error());
    }
    if !matchplane_matchmaker::validation::within(
        import.rating,
        matchplane_matchmaker::validation::MAX_ABS_MMR,
    ) {
        errors.push(FieldError::new(
            "rating",
            Code::ValidationError,
            "rating must be a number within ±1e9",
        ));
    }
    // The mode's `initialDeviation` is the most any of its players' can
    // be (an idle player's grows back to it, docs/ratings.md).
    let most = config.initial_deviation;
    if !(import.deviation > 0.0 && import.deviation <= most) {
        errors.push(FieldError::new(
            "deviation",
            Code::ValidationError,
            format!("deviation must be > 0 and at most the mode's initialDeviation ({most})"),
        ));
    }
    if !(import.volatility > 0.0 && import.volatility <= 10.0) {
        errors.push(FieldError::new(
            "volatility",
            Code::ValidationError,
            "volatility must be > 0 and at most 10",
        ));
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    let value = Rating {
        rating: import.rating,
        deviation: import.deviation,
        volatility: import.volatility,
    };
    let row = ratings::put(
        &state.db,
        &project_id,
        &mode.id,
        &player_id,
        value,
        Utc::now(),
    )
    .await?;
    Ok(Json(view(&player_id, ratings::as_rating(&row), row.games)))
}

/// The mode's players by conservative rating (`rating - 2 * deviation`,
/// idle growth included), best first.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/leaderboard", tag = "ratings", operation_id = "getLeaderboard",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), LeaderboardQuery),
    responses((status = 200, body = LeaderboardPage), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn leaderboard(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<LeaderboardQuery>,
) -> Result<Json<LeaderboardPage>, ApiError> {
    let (mode, config) = rated_mode(&state, &project_id, &name).await?;
    let limit = crate::params::PageLimit::or_default(query.limit);
    let offset: usize = match &query.cursor {
        None => 0,
        Some(c) => c.parse().map_err(|_| {
            ApiError::invalid(vec![FieldError::new(
                "cursor",
                Code::ValidationError,
                "not a cursor of this leaderboard",
            )])
        })?,
    };
    let now = Utc::now();
    let mut all: Vec<RatingView> = ratings::list(&state.db, &mode.id)
        .await?
        .iter()
        .map(|row| view(&row.player_id, current(row, &config, now), row.games))
        .collect();
    all.sort_by(|a, b| {
        b.conservative
            .total_cmp(&a.conservative)
            .then_with(|| a.player_id.cmp(&b.player_id))
    });
    let end = offset.saturating_add(limit as usize).min(all.len());
    let next_cursor = (end < all.len()).then(|| end.to_string());
    let items = all.into_iter().skip(offset).take(limit as usize).collect();
    Ok(Json(LeaderboardPage { items, next_cursor }))
}
