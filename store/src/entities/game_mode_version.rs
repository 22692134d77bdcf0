//! `game_mode_versions`: every version a game mode ever had.

use sea_orm::entity::prelude::*;

/// One historical version.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "game_mode_versions")]
pub struct Model {
    /// The mode (`game_modes.id`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode_id: String,
    /// The version number (1, 2, …).
    #[sea_orm(primary_key, auto_increment = false)]
    pub version: i64,
    /// Owning project.
    pub project_id: String,
    /// The mode's name at that version.
    pub name: String,
    /// The config JSON at that version.
    #[sea_orm(column_type = "JsonBinary")]
    pub config: Json,
    /// When this version was committed.
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
