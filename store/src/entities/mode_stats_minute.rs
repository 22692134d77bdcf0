//! `mode_stats_minutes`: one game mode's figures of one minute (the stats
//! history), merged by the worker after each cycle of that minute. A minute
//! without searches or matches has no row.

use sea_orm::entity::prelude::*;

/// One mode's minute.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "mode_stats_minutes")]
pub struct Model {
    /// Owning project.
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: String,
    /// Game mode name.
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode: String,
    /// Start of the minute (UTC, seconds 0).
    #[sea_orm(primary_key, auto_increment = false)]
    pub minute: DateTimeUtc,
    /// Cycles that ran in the minute with searches or matches.
    pub cycles: i64,
    /// Pool sizes of those cycles, added up (the mean is this / `cycles`).
    pub searching_sum: i64,
    /// Largest pool of those cycles.
    pub searching_max: i64,
    /// Matches claimed.
    pub matches: i64,
    /// Players seated in them.
    pub matched_players: i64,
    /// Matched players' waits (seconds): JSON array of counts over
    /// `matchplane_matchmaker::histogram::WAIT_BOUNDS`.
    pub wait_histogram: String,
    /// The matches' MMR spreads: JSON array of counts over
    /// `matchplane_matchmaker::histogram::SPREAD_BOUNDS`.
    pub spread_histogram: String,
    /// Match proposals opened (modes with acceptance).
    pub proposals: i64,
    /// Proposals declined or timed out.
    pub declines: i64,
    /// Per rule over attributes (docs/rules.md), the candidates it turned
    /// away in the minute's cycles, added up: a JSON object of counts by
    /// rule name; `None` when no rule turned anyone away.
    pub rule_turned_away: Option<String>,
    /// Per role seat (docs/rules.md, "Role waits"), the players matched in
    /// it and their waits: a JSON object by role of `{"matched": n,
    /// "waits": [counts over WAIT_BOUNDS]}`
    /// (`matchplane_matchmaker::role_waits::RoleWaits`); `None` for a
    /// minute without role seats matched (every minute of a mode without
    /// `composition`).
    pub role_stats: Option<String>,
    /// Last write.
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
