//! `mode_cycle_stats.pool_summary`: the pool as the last cycle saw it (counts
//! by waiting reason, a histogram of MMR and one of latency), as JSON,
//! written by the worker with the cycle's other figures and served by
//! `GET …/game-modes/{name}/pool`, so a console's live view never reads the
//! whole pool.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::text_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ModeCycleStats {
    Table,
    PoolSummary,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            ModeCycleStats::Table,
            text_null(ModeCycleStats::PoolSummary),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, ModeCycleStats::Table, ModeCycleStats::PoolSummary).await
    }
}
