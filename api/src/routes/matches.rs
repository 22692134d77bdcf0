//! Matches (docs/api-tour.md): `GET /v1/projects/{projectId}/matches?gameMode=&limit=&cursor=`
//! and `GET …/matches/{matchId}`. API key of the project (or the operator).
//!
//! Matches are written by the worker's outbox consumer; ids are
//! `mat_<ulid>`, so a page is newest first and its cursor is the last id.

use crate::auth::ProjectCaller;
use crate::extract::ApiQuery;
use crate::play::matched::fill_data;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::acceptance::Answer;
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::entities::{match_, match_ticket};
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::{
    backfills, match_status, match_tickets, matches, projects, StoreError,
};
use matchplane_webhook::payload::Team;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use utoipa::{IntoParams, ToSchema};

/// A match as stored: the `match.made` body without its `type`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0", "projectId": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9", "gameMode": "duel", "gameModeVersion": 1, "createdAt": "2026-12-01T10:00:00.000Z", "teams": [{"index": 0, "players": [{"playerId": "ana", "ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "partyId": null, "mmr": 1500.0, "pingMs": null, "waitSeconds": 2.4}], "meanMmr": 1500.0}], "quality": {"mmrSpread": 20.0, "teamImbalance": 20.0}, "status": "made"}))]
#[serde(rename_all = "camelCase")]
pub struct MatchView {
    /// `mat_…`, also the webhook's `webhook-id`.
    pub match_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The mode's config version the match was made under.
    pub game_mode_version: i64,
    /// When the match was made (with acceptance: when it was proposed).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// When the match was stored as made and its players told `matched`:
    /// moments after `createdAt`, with acceptance once its last player
    /// accepted, later when the stores were unreachable then. The release
    /// window and the assignment wait count from it (docs/acceptance.md).
    /// Absent for a proposal that was not made; a match without it was
    /// made at `createdAt`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "matchplane_matchmaker::timestamp::option::serialize"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub made_at: Option<DateTime<Utc>>,
    /// Teams in match-shape order, as in the `match.made` webhook body
    /// (each player's ticket `data` in its entry, as sent).
    #[schema(value_type = Vec<matchplane_webhook::payload::TeamWire>)]
    pub teams: Vec<Team>,
    /// `{mmrSpread, teamImbalance}`.
    #[schema(value_type = matchplane_webhook::payload::Quality)]
    pub quality: Value,
    /// The shape used, players per team (a relaxed shape, a settled
    /// flexible match's team sizes; a bot match's base shape); absent for
    /// matches stored before it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<u32>>)]
    pub match_shape: Option<Value>,
    /// Seats open to backfill per team; absent as `matchShape`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<u32>>)]
    pub seats_open: Option<Value>,
    /// The region the match is played in; absent in modes without `regions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// `proposed` (acceptance: not answered by everyone yet), `made`,
    /// `cancelled` (a proposal someone declined or let time out),
    /// `released` (by the studio) or `unassigned` (no assignment in time).
    #[schema(value_type = matchplane_store::repos::match_status::MatchStatus)]
    pub status: String,
    /// A proposal's answer per ticket (`accepted`, `declined`, `timeout`,
    /// `none`); absent in modes without acceptance.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<std::collections::BTreeMap<String, matchplane_store::repos::match_status::AnswerWord>>)]
    pub answers: Option<Value>,
    /// The assignment the studio posted (`connection`, `data`, `players`
    /// with each player's own `data`); absent until posted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub assignment: Option<Value>,
    /// What every player agreed on under the mode's rules (docs/rules.md):
    /// each `equal` rule's common value, each `intersect` rule's shared
    /// values, by attribute; absent without rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>)]
    pub attributes: Option<Value>,
}

impl MatchView {
    /// The view of the stored match `m`, whose stored tickets are among
    /// `tickets` (they give each player its `data`).
    ///
    /// # Errors
    /// `500` when the stored teams cannot be read as a match's.
    pub(crate) fn of(
        m: match_::Model,
        tickets: &[match_ticket::Model],
        current: &HashMap<String, backfills::CurrentRoster>,
    ) -> Result<Self, ApiError> {
        let answers = match_status::shown_answers(&m);
        let mut teams: Vec<Team> = serde_json::from_value(m.teams)
            .map_err(|e| ApiError::from(StoreError::Corrupt(format!("match {}: {e}", m.id))))?;
        fill_data(&mut teams, tickets);
        let shape = matchplane_webhook::payload::shape_of(m.match_shape.as_ref());
        matchplane_webhook::payload::follow_roster(
            &mut teams,
            current.get(&m.id),
            shape.as_deref(),
        );
        Ok(Self {
            match_id: m.id,
            project_id: m.project_id,
            game_mode: m.game_mode,
            game_mode_version: m.game_mode_version,
            created_at: m.created_at,
            made_at: m.made_at,
            teams,
            quality: m.quality,
            match_shape: m.match_shape,
            seats_open: m.seats_open,
            region: m.region,
            answers,
            status: m.status,
            assignment: m.assignment,
            attributes: m.attributes,
        })
    }

    /// A proposal still open shows its answers so far, from the pool store
    /// (the row keeps `none` until it closes).
    ///
    /// # Errors
    /// `500` when the pool store fails.
    async fn with_live_answers(mut self, state: &AppState) -> Result<Self, ApiError> {
        if self.status != match_status::PROPOSED {
            return Ok(self);
        }
        let mode = ModeKey::new(&self.project_id, &self.game_mode);
        if let Some(open) = state.play.pool.proposal(&mode, &self.match_id).await? {
            let words = open.members.iter().map(|m| {
                let word = match m.answer {
                    Answer::Accept => "accepted",
                    Answer::Decline | Answer::Gone => "declined",
                    Answer::Pending | Answer::Failed => "none",
                };
                (m.ticket_id.clone(), Value::String(word.to_owned()))
            });
            self.answers = Some(Value::Object(words.collect()));
        }
        Ok(self)
    }
}

/// Query of the matches list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct MatchesQuery {
    /// Only matches of this game mode.
    pub game_mode: Option<String>,
    /// Matches per page, 1..=200 (default 50).
    #[param(value_type = Option<u64>, minimum = 1, maximum = 200)]
    pub limit: Option<crate::params::PageLimit>,
    /// `nextCursor` of the previous page: `mat_` and a ULID.
    #[param(pattern = "^mat_[0-9A-HJKMNP-TV-Z]{26}$")]
    pub cursor: Option<String>,
}

/// A page of matches.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"items": [{"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0", "projectId": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9", "gameMode": "duel", "gameModeVersion": 1, "createdAt": "2026-12-01T10:00:00.000Z", "teams": [], "quality": {"mmrSpread": 0.0, "teamImbalance": 0.0}, "status": "made"}], "nextCursor": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0"}))]
#[serde(rename_all = "camelCase")]
pub struct MatchesPage {
    /// Newest first.
    pub items: Vec<MatchView>,
    /// Cursor of the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The project's matches, newest first.
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches", tag = "matches", operation_id = "listMatches",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), MatchesQuery),
    responses((status = 200, body = MatchesPage), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn list(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path(project_id): Path<String>,
    ApiQuery(query): ApiQuery<MatchesQuery>,
) -> Result<Json<MatchesPage>, ApiError> {
    let limit = crate::params::PageLimit::or_default(query.limit);
    // A cursor is a `nextCursor` this list gave, `mat_` and a ULID
    // (docs/openapi.md, "Lists"): anything else is refused, never read as
    // "from the start".
    let cursor = query
        .cursor
        .as_deref()
        .map(matches::Cursor::parse)
        .transpose()
        .map_err(|_| {
            ApiError::invalid(vec![FieldError::new(
                "cursor",
                Code::ValidationError,
                "not a cursor of this list",
            )])
        })?;
    projects::get(&state.db, &project_id).await?;
    let rows = matches::list(
        &state.db,
        &project_id,
        query.game_mode.as_deref(),
        cursor.as_ref(),
        limit,
    )
    .await?;
    let next_cursor = if rows.len() as u64 == limit {
        rows.last().map(|m| m.id.clone())
    } else {
        None
    };
    let ids: Vec<&str> = rows.iter().map(|m| m.id.as_str()).collect();
    let tickets = match_tickets::of_matches(&state.db, &project_id, &ids).await?;
    let current = backfills::current_rosters(&state.db, &project_id, &ids).await?;
    let mut items = Vec::with_capacity(rows.len());
    for row in rows {
        items.push(
            MatchView::of(row, &tickets, &current)?
                .with_live_answers(&state)
                .await?,
        );
    }
    Ok(Json(MatchesPage { items, next_cursor }))
}

/// One match.
#[utoipa::path(get, path = "/v1/projects/{projectId}/matches/{matchId}", tag = "matches", operation_id = "getMatch",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("matchId" = String, Path, description = "`mat_…`")),
    responses((status = 200, body = MatchView), (status = 404, body = Problem)))]
pub async fn get(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, match_id)): Path<(String, String)>,
) -> Result<Json<MatchView>, ApiError> {
    let row = matches::get(&state.db, &project_id, &match_id).await?;
    let tickets = match_tickets::of_matches(&state.db, &project_id, &[&match_id]).await?;
    let current = backfills::current_rosters(&state.db, &project_id, &[&match_id]).await?;
    Ok(Json(
        MatchView::of(row, &tickets, &current)?
            .with_live_answers(&state)
            .await?,
    ))
}
