//! `instance_keys`: keys every process of one installation shares, kept in
//! its database so that nothing has to be configured for them to agree.
//! One row per key (`name`, `value`); the first is `recording`, the key of
//! the recordings' player-id hashes when `MATCHPLANE_RECORDING_KEY` is not
//! set (docs/retention.md, "Erasing a player"). A key is written once, by
//! whichever process first needs it, and never changed.

use crate::ops::{create_table, drop_table};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::string;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of `instance_keys`.
#[derive(DeriveIden, Clone, Copy)]
enum InstanceKeys {
    Table,
    Name,
    Value,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(InstanceKeys::Table)
                .col(string(InstanceKeys::Name).primary_key())
                .col(string(InstanceKeys::Value)),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, InstanceKeys::Table).await
    }
}
