//! `mode_cycle_stats`: the last cycle's figures of each game mode (docs/api-tour.md,
//! `GET …/game-modes/{name}/stats`), replaced by the worker after every cycle.

use sea_orm::entity::prelude::*;

/// The last cycle of one mode.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "mode_cycle_stats")]
pub struct Model {
    /// Owning project.
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: String,
    /// Game mode name.
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode: String,
    /// Searches in the pool the cycle read.
    pub pool_size: i64,
    /// Candidates (complete, eligible parties) of the cycle.
    pub candidates: i64,
    /// Matches the cycle claimed.
    pub matches: i64,
    /// Wall time of the cycle, snapshot to last claim (milliseconds).
    pub duration_ms: f64,
    /// When the cycle ended.
    pub ran_at: DateTimeUtc,
    /// The pool as the cycle saw it (JSON of
    /// `matchplane_matchmaker::pool_summary::PoolSummary`); `None` from a
    /// worker that did not write one.
    pub pool_summary: Option<String>,
    /// The last measured start-to-start period of the mode's cycles
    /// (seconds); `None` before two cycles ran in a row on one worker.
    pub period_seconds: Option<f64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
