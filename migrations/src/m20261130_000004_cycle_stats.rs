//! `mode_cycle_stats`: the last cycle's figures of each game mode, written by
//! the worker that ran it and read by `GET …/game-modes/{name}/stats`
//! (SPEC 7). One row per mode, replaced after every cycle.

use crate::ops::{create_table, drop_table, key};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, double, string, timestamp_with_time_zone};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ModeCycleStats {
    Table,
    ProjectId,
    GameMode,
    PoolSize,
    Candidates,
    Matches,
    DurationMs,
    RanAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(ModeCycleStats::Table)
                .col(string(ModeCycleStats::ProjectId))
                .col(string(ModeCycleStats::GameMode))
                .col(big_integer(ModeCycleStats::PoolSize))
                .col(big_integer(ModeCycleStats::Candidates))
                .col(big_integer(ModeCycleStats::Matches))
                .col(double(ModeCycleStats::DurationMs))
                .col(timestamp_with_time_zone(ModeCycleStats::RanAt))
                .primary_key(&mut key([
                    ModeCycleStats::ProjectId,
                    ModeCycleStats::GameMode,
                ])),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, ModeCycleStats::Table).await
    }
}
