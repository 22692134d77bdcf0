//! `backfills`: a studio's request to fill a running match's open seats
//! (docs/backfill.md), written by the API and updated by the worker at each fill.

use sea_orm::entity::prelude::*;

/// One backfill request.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "backfills")]
pub struct Model {
    /// `bf_<ulid>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Owning project.
    pub project_id: String,
    /// The match's game mode.
    pub game_mode: String,
    /// The running match (`mat_…`).
    pub match_id: String,
    /// The match id while the request is open, `NULL` once it is not
    /// (unique: one open request per match).
    pub open_match_id: Option<String>,
    /// `open`, `filled`, `closed` or `expired`.
    pub status: String,
    /// The roster last sent (`{"teams":[…]}`).
    #[sea_orm(column_type = "JsonBinary")]
    pub roster: Json,
    /// Open seats per team as last recorded.
    #[sea_orm(column_type = "JsonBinary")]
    pub open_seats: Json,
    /// In a role-queue mode, open seats per team and role as last recorded
    /// (`[{"damage": 1, "tank": 0}, …]`, docs/rules.md, "Backfill by
    /// role"); `None` otherwise.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub open_roles: Option<Json>,
    /// Fills recorded.
    pub fills: i32,
    /// Seats those fills took (players).
    pub seats_filled: i32,
    /// The pool store's revision last written by the API (1 at open).
    pub revision: i64,
    /// When the request was opened.
    pub created_at: DateTimeUtc,
    /// When it last changed.
    pub updated_at: DateTimeUtc,
    /// When it expires unless filled or closed first.
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
