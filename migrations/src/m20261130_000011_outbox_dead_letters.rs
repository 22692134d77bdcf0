//! `outbox_dead_letters`: outbox records the worker could not read as a
//! match (docs/architecture.md). Holding such an entry in the outbox would stop every
//! later match of its mode, dropping it would lose it: it is kept here, as
//! received, before it is acknowledged. One row per outbox entry; no foreign
//! key, so a record of a deleted project or mode is kept too.

use crate::m20261130_000001_tenancy::ts;
use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum OutboxDeadLetters {
    Table,
    ProjectId,
    GameMode,
    OutboxId,
    MatchId,
    Record,
    Error,
    CreatedAt,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000011_outbox_dead_letters"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(OutboxDeadLetters::Table)
                    .col(
                        ColumnDef::new(OutboxDeadLetters::ProjectId)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(OutboxDeadLetters::GameMode)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(OutboxDeadLetters::OutboxId)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(OutboxDeadLetters::MatchId)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(OutboxDeadLetters::Record).text().not_null())
                    .col(ColumnDef::new(OutboxDeadLetters::Error).text().not_null())
                    .col(ts(OutboxDeadLetters::CreatedAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(OutboxDeadLetters::ProjectId)
                            .col(OutboxDeadLetters::GameMode)
                            .col(OutboxDeadLetters::OutboxId),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(OutboxDeadLetters::Table).to_owned())
            .await
    }
}
