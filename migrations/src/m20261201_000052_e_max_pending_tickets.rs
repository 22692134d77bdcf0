//! `tiers.max_pending_tickets`: the most tickets a project may hold
//! generated but not yet searching, seeded for the three tiers (free
//! 10 000, pro 1 000 000, enterprise 20 000 000); a tier the operator made
//! gets the free tier's number.

use sea_orm_migration::prelude::*;

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

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000052_e_max_pending_tickets"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Tiers::Table)
                    .add_column(
                        ColumnDef::new(Tiers::MaxPendingTickets)
                            .big_integer()
                            .not_null()
                            .default(SEEDED[0].1),
                    )
                    .to_owned(),
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
        manager
            .alter_table(
                Table::alter()
                    .table(Tiers::Table)
                    .drop_column(Tiers::MaxPendingTickets)
                    .to_owned(),
            )
            .await
    }
}
