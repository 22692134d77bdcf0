//! `tiers.retention_days`: how many days a project's matches and webhook
//! deliveries (with their attempts) are kept before the worker prunes them
//! (docs/game-modes.md#tier-limits, docs/deployment.md#scaling), seeded for the three tiers (free 30, pro 90, enterprise
//! 365); a tier the operator made gets 90, the default.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::integer;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Tiers {
    Table,
    Name,
    RetentionDays,
}

/// The days of a tier not seeded here.
const DEFAULT: i32 = 90;

/// The seeded values, as this migration writes them (never read from the
/// code's tiers: a migration that ran must not change).
const SEEDED: [(&str, i32); 3] = [("free", 30), ("pro", 90), ("enterprise", 365)];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            Tiers::Table,
            integer(Tiers::RetentionDays).default(DEFAULT),
        )
        .await?;
        for (name, days) in SEEDED {
            manager
                .exec_stmt(
                    Query::update()
                        .table(Tiers::Table)
                        .value(Tiers::RetentionDays, days)
                        .and_where(Expr::col(Tiers::Name).eq(name))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, Tiers::Table, Tiers::RetentionDays).await
    }
}
