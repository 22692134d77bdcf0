//! `idempotency_keys`: the first answer to a creating `POST` sent with an
//! `Idempotency-Key` header, kept 24 hours so a retry gets the same answer
//! instead of creating again. One row per project and key; a row without
//! `status` is a request still running (its retries wait for it).
//!
//! The answer's body is stored encrypted (`body`, with its `seed`) under a
//! key derived from the caller's credential, which is never stored: the
//! table alone does not give a ticket token away.

use crate::ops::{create_index, create_table, drop_table, key};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    integer_null, string, string_null, text_null, timestamp_with_time_zone,
};

#[derive(DeriveMigrationName)]
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

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(IdempotencyKeys::Table)
                .col(string(IdempotencyKeys::ProjectId))
                .col(string(IdempotencyKeys::Key))
                .col(string(IdempotencyKeys::RequestDigest))
                .col(string(IdempotencyKeys::Seed))
                .col(integer_null(IdempotencyKeys::Status))
                .col(string_null(IdempotencyKeys::ContentType))
                .col(text_null(IdempotencyKeys::Body))
                .col(timestamp_with_time_zone(IdempotencyKeys::CreatedAt))
                .primary_key(&mut key([IdempotencyKeys::ProjectId, IdempotencyKeys::Key])),
        )
        .await?;
        create_index(
            manager,
            "idx_idempotency_keys_created_at",
            IdempotencyKeys::Table,
            [IdempotencyKeys::CreatedAt],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, IdempotencyKeys::Table).await
    }
}
