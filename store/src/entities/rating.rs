//! `ratings`: one player's Glicko-2 rating in one game mode.

use sea_orm::entity::prelude::*;

/// One rating row. Values are as of `rated_at`; idle growth of the
/// deviation is applied when the rating is read or used, not stored.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "ratings")]
pub struct Model {
    /// The game mode's row id (ratings of a mode are its own).
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode_id: String,
    /// The studio's player id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub player_id: String,
    /// Owning project.
    pub project_id: String,
    /// r (Glicko scale).
    pub rating: f64,
    /// RD (Glicko scale).
    pub deviation: f64,
    /// σ.
    pub volatility: f64,
    /// Rated reports the player took part in.
    pub games: i64,
    /// When these values were last set (start of idle periods).
    pub rated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
