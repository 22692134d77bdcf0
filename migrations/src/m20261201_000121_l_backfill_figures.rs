//! Indexes for a mode's backfill figures (docs/backfill.md, the mode's stats): a
//! mode's requests by status, and a project's fills by time.

use crate::ops::create_index;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Backfills {
    Table,
    ProjectId,
    GameMode,
    Status,
}

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum BackfillFills {
    Table,
    ProjectId,
    CreatedAt,
}

/// A mode's requests by status (the open ones are counted).
const BY_MODE: &str = "idx_backfills_project_mode_status";
/// A project's fills by time (the last hour's are read).
const FILLS_BY_TIME: &str = "idx_backfill_fills_project_created";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_index(
            manager,
            BY_MODE,
            Backfills::Table,
            [Backfills::ProjectId, Backfills::GameMode, Backfills::Status],
        )
        .await?;
        create_index(
            manager,
            FILLS_BY_TIME,
            BackfillFills::Table,
            [BackfillFills::ProjectId, BackfillFills::CreatedAt],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(FILLS_BY_TIME)
                    .table(BackfillFills::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(BY_MODE)
                    .table(Backfills::Table)
                    .to_owned(),
            )
            .await
    }
}
