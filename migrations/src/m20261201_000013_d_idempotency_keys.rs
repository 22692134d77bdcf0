//! `idempotency_keys`: the first answer to a creating `POST` sent with an
//! `Idempotency-Key` header, kept 24 hours so a retry gets the same answer
//! instead of creating again. One row per project and key; a row without
//! `status` is a request still running (its retries wait for it).
//!
//! The answer's body is stored encrypted (`body`, with its `seed`) under a
//! key derived from the caller's credential, which is never stored: the
//! table alone does not give a ticket token away.

use crate::m20261130_000001_tenancy::ts;
use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum IdempotencyKeys {
    Table,
    ProjectId,
    Key,
    RequestDigest,
    Seed,
    Status,
    ContentType,
    Body,
    CreatedAt,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000013_d_idempotency_keys"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(IdempotencyKeys::Table)
                    .col(
                        ColumnDef::new(IdempotencyKeys::ProjectId)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(IdempotencyKeys::Key).string().not_null())
                    .col(
                        ColumnDef::new(IdempotencyKeys::RequestDigest)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(IdempotencyKeys::Seed).string().not_null())
                    .col(ColumnDef::new(IdempotencyKeys::Status).integer().null())
                    .col(ColumnDef::new(IdempotencyKeys::ContentType).string().null())
                    .col(ColumnDef::new(IdempotencyKeys::Body).text().null())
                    .col(ts(IdempotencyKeys::CreatedAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(IdempotencyKeys::ProjectId)
                            .col(IdempotencyKeys::Key),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_idempotency_keys_created_at")
                    .table(IdempotencyKeys::Table)
                    .col(IdempotencyKeys::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(IdempotencyKeys::Table).to_owned())
            .await
    }
}
