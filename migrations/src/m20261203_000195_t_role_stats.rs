//! `mode_stats_minutes.role_stats` (docs/rules.md, "Role waits"; docs/api-tour.md,
//! the stats history): per role seat of a mode with `composition`, the
//! players matched in it in the minute and their waits, as a JSON object
//! by role (`{"tank": {"matched": 3, "waits": [0, 1, …]}}`, the waits as
//! counts over the minute's wait-histogram bounds). `NULL` for a minute
//! without role seats matched (every minute of a mode without
//! `composition`). Text, as the minute's histograms are: the row is read
//! and merged whole by the worker, never queried by its content.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::text_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ModeStatsMinutes {
    Table,
    RoleStats,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            ModeStatsMinutes::Table,
            text_null(ModeStatsMinutes::RoleStats),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(
            manager,
            ModeStatsMinutes::Table,
            ModeStatsMinutes::RoleStats,
        )
        .await
    }
}
