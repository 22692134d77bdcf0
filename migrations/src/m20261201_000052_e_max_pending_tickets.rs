//! `tiers.max_pending_tickets`: the most tickets a project may hold
//! generated but not yet searching, seeded for the three tiers (free
//! 10 000, pro 1 000 000, enterprise 20 000 000); a tier the operator made
//! gets the free tier's number.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::big_integer;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Tiers {
    Table,
    Name,
    MaxPendingTickets,
}

/// The seeded values, as this migration writes them (never read from the
/// code's tiers: a migration that ran must not change).
const SEEDED: [(&str, i64); 3] = [
    ("free", 10_000),
    ("pro", 1_000_000),
    ("enterprise", 20_000_000),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            Tiers::Table,
            big_integer(Tiers::MaxPendingTickets).default(SEEDED[0].1),
        )
        .await?;
        for (name, max) in SEEDED {
            manager
                .exec_stmt(
                    Query::update()
                        .table(Tiers::Table)
                        .value(Tiers::MaxPendingTickets, max)
                        .and_where(Expr::col(Tiers::Name).eq(name))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, Tiers::Table, Tiers::MaxPendingTickets).await
    }
}
