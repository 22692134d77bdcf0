//! `lease_epochs`: one row per worker start, its `epoch` the high half of
//! every fencing token that worker draws for a mode's lease. Epochs never
//! repeat, so tokens stay unique when Redis loses its fence counters (a
//! restart without persistence).

use crate::ops::{create_table, drop_table};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{pk_auto, string, timestamp_with_time_zone};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum LeaseEpochs {
    Table,
    Epoch,
    WorkerId,
    TakenAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(LeaseEpochs::Table)
                .col(pk_auto(LeaseEpochs::Epoch))
                .col(string(LeaseEpochs::WorkerId))
                .col(timestamp_with_time_zone(LeaseEpochs::TakenAt)),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, LeaseEpochs::Table).await
    }
}
