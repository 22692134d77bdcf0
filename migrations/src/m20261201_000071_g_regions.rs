//! `matches.region`: the region a match is played in (a mode with
//! `regions`). Nullable: matches of other modes, and those stored before,
//! have none.

use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Matches {
    Table,
    Region,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000071_g_regions"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Matches::Table)
                    .add_column(ColumnDef::new(Matches::Region).string_len(32).null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Matches::Table)
                    .drop_column(Matches::Region)
                    .to_owned(),
            )
            .await
    }
}
