//! `tiers`: the limits of a plan (docs/game-modes.md#tier-limits), editable by the operator.

use sea_orm::entity::prelude::*;

/// One tier row; the numbers of [`matchplane_matchmaker::Tier`].
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "tiers")]
pub struct Model {
    /// Tier name, e.g. `free`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub name: String,
    /// Shortest cycle (seconds).
    pub min_cycle_duration_seconds: f64,
    /// Lowest `baseTolerance` (percent).
    pub min_base_tolerance: f64,
    /// Lowest `expansionMultiplier`.
    pub min_expansion_multiplier: f64,
    /// Largest shape sum (players).
    pub max_match_size: i64,
    /// Most game modes per project.
    pub max_game_modes: i64,
    /// Most live searches per project.
    pub max_concurrent_searches: i64,
    /// Token-bucket rate per project (requests per second).
    pub requests_per_second: i64,
    /// Most tickets per project generated and not yet searching.
    pub max_pending_tickets: i64,
    /// Days a project's matches and webhook deliveries are kept.
    pub retention_days: i32,
    /// When the row was created.
    pub created_at: DateTimeUtc,
    /// When the row last changed.
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The matching core's view of this tier (saturating out-of-range numbers).
    pub fn to_tier(&self) -> matchplane_matchmaker::Tier {
        matchplane_matchmaker::Tier {
            name: self.name.clone(),
            min_cycle_duration_seconds: self.min_cycle_duration_seconds,
            min_base_tolerance: self.min_base_tolerance,
            min_expansion_multiplier: self.min_expansion_multiplier,
            max_match_size: u32::try_from(self.max_match_size.max(0)).unwrap_or(u32::MAX),
            max_game_modes: u32::try_from(self.max_game_modes.max(0)).unwrap_or(u32::MAX),
            max_concurrent_searches: u64::try_from(self.max_concurrent_searches.max(0))
                .unwrap_or(u64::MAX),
            requests_per_second: u32::try_from(self.requests_per_second.max(0)).unwrap_or(u32::MAX),
            max_pending_tickets: u64::try_from(self.max_pending_tickets.max(0)).unwrap_or(u64::MAX),
            retention_days: u32::try_from(self.retention_days.max(1)).unwrap_or(1),
        }
    }
}
