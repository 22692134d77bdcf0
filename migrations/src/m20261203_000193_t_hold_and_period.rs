//! Held matching and the measured cycle period (docs/game-modes.md, "Holding
//! matching"; docs/api-tour.md, the mode's stats):
//!
//! - `game_modes.held_at`, `game_modes.held_by`: a mode's hold, part of its
//!   live state and not of its config version (no version bump, not in the
//!   history), read by the worker at every cycle and shown in the mode view
//!   and its stats; `NULL` when the mode is not held. A deleted mode's row
//!   goes, and its hold with it.
//! - `mode_cycle_stats.period_seconds`: the last measured start-to-start
//!   period of the mode's cycles, written by the worker with the cycle's
//!   other figures.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{double_null, string_null, timestamp_with_time_zone_null};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum GameModes {
    Table,
    HeldAt,
    HeldBy,
}

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ModeCycleStats {
    Table,
    PeriodSeconds,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            GameModes::Table,
            timestamp_with_time_zone_null(GameModes::HeldAt),
        )
        .await?;
        add_column(manager, GameModes::Table, string_null(GameModes::HeldBy)).await?;
        add_column(
            manager,
            ModeCycleStats::Table,
            double_null(ModeCycleStats::PeriodSeconds),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(
            manager,
            ModeCycleStats::Table,
            ModeCycleStats::PeriodSeconds,
        )
        .await?;
        drop_column(manager, GameModes::Table, GameModes::HeldBy).await?;
        drop_column(manager, GameModes::Table, GameModes::HeldAt).await
    }
}
