//! `outbox_dead_letters`: outbox records the worker could not read as a
//! match (SPEC 5.8). Holding such an entry in the outbox would stop every
//! later match of its mode, dropping it would lose it: it is kept here, as
//! received, before it is acknowledged. One row per outbox entry; no foreign
//! key, so a record of a deleted project or mode is kept too.

use crate::ops::{create_table, drop_table, key};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{string, text, timestamp_with_time_zone};

#[derive(DeriveMigrationName)]
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

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(OutboxDeadLetters::Table)
                .col(string(OutboxDeadLetters::ProjectId))
                .col(string(OutboxDeadLetters::GameMode))
                .col(string(OutboxDeadLetters::OutboxId))
                .col(string(OutboxDeadLetters::MatchId))
                .col(text(OutboxDeadLetters::Record))
                .col(text(OutboxDeadLetters::Error))
                .col(timestamp_with_time_zone(OutboxDeadLetters::CreatedAt))
                .primary_key(&mut key([
                    OutboxDeadLetters::ProjectId,
                    OutboxDeadLetters::GameMode,
                    OutboxDeadLetters::OutboxId,
                ])),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, OutboxDeadLetters::Table).await
    }
}
