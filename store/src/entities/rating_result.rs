//! `rating_results`: a report's `matchId`, once applied to a mode's ratings.

use sea_orm::entity::prelude::*;

/// One applied report.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "rating_results")]
pub struct Model {
    /// The game mode's row id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode_id: String,
    /// The studio's match id; applied at most once per mode.
    #[sea_orm(primary_key, auto_increment = false)]
    pub match_id: String,
    /// Owning project.
    pub project_id: String,
    /// When it was applied.
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
