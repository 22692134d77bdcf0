//! `idempotency_keys.location`: the `Location` header of a kept `201`
//! answer, so that a retry's replay names the created resource as the
//! first answer did (docs/api-keys.md, `Idempotency-Key`). Answers kept
//! before this migration have none; they are replayed without it.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::string_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum IdempotencyKeys {
    Table,
    Location,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            IdempotencyKeys::Table,
            string_null(IdempotencyKeys::Location),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, IdempotencyKeys::Table, IdempotencyKeys::Location).await
    }
}
