//! `mode_cycle_stats`: the last cycle's figures of each game mode, written by
//! the worker that ran it and read by `GET …/game-modes/{name}/stats`
//! (docs/api-tour.md). One row per mode, replaced after every cycle.

use crate::m20261130_000001_tenancy::ts;
use sea_orm_migration::prelude::*;

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

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000004_cycle_stats"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ModeCycleStats::Table)
                    .col(
                        ColumnDef::new(ModeCycleStats::ProjectId)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(ModeCycleStats::GameMode).string().not_null())
                    .col(
                        ColumnDef::new(ModeCycleStats::PoolSize)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ModeCycleStats::Candidates)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ModeCycleStats::Matches)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ModeCycleStats::DurationMs)
                            .double()
                            .not_null(),
                    )
                    .col(ts(ModeCycleStats::RanAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(ModeCycleStats::ProjectId)
                            .col(ModeCycleStats::GameMode),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ModeCycleStats::Table).to_owned())
            .await
    }
}
