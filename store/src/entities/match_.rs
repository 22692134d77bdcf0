//! `matches`: every match formed (docs/architecture.md), written by the worker.

use sea_orm::entity::prelude::*;

/// One match row.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "matches")]
pub struct Model {
    /// `mat_<ulid>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Owning project.
    pub project_id: String,
    /// Game mode name.
    pub game_mode: String,
    /// The mode's version the match was formed under.
    pub game_mode_version: i64,
    /// The `teams` array of docs/webhook-events.md's body.
    #[sea_orm(column_type = "JsonBinary")]
    pub teams: Json,
    /// The `quality` object of docs/webhook-events.md's body.
    #[sea_orm(column_type = "JsonBinary")]
    pub quality: Json,
    /// When the match was formed.
    pub created_at: DateTimeUtc,
    /// The shape used, players per team (docs/game-modes.md#thin-pools-smaller-matches-and-bots); `NULL` for matches
    /// stored before shapes were recorded.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub match_shape: Option<Json>,
    /// Seats open to backfill per team (docs/game-modes.md#thin-pools-smaller-matches-and-bots); `NULL` as `match_shape`.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub seats_open: Option<Json>,
    /// The region the match is played in (docs/regions.md); `NULL` without `regions`.
    #[sea_orm(nullable)]
    pub region: Option<String>,
    /// `proposed`, `made`, `cancelled`, `released` or `unassigned`
    /// (docs/acceptance.md; see [`crate::repos::matches::status`]).
    pub status: String,
    /// A proposal's answer per ticket: JSON object ticketId → `accepted`,
    /// `declined`, `timeout` or `none`; `NULL` in a mode without acceptance.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub answers: Option<Json>,
    /// When the proposal became the match (the release window counts from
    /// it); `NULL`: at `created_at`.
    #[sea_orm(nullable)]
    pub made_at: Option<DateTimeUtc>,
    /// The studio's assignment (`{"connection", "data", "players"}`), once
    /// posted (docs/acceptance.md).
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub assignment: Option<Json>,
    /// What every player agreed on under the mode's rules (docs/rules.md,
    /// "The match"): a JSON object by attribute; `NULL` without rules.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub attributes: Option<Json>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
