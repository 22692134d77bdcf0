//! `api_keys.scopes`: what a key may do, as space-separated scope names
//! (`admin`, `backend`). Keys that existed before this migration could do
//! everything, so they become `admin`: their behaviour is unchanged.

use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ApiKeys {
    Table,
    Scopes,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000012_d_key_scopes"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(ApiKeys::Table)
                    .add_column(
                        ColumnDef::new(ApiKeys::Scopes)
                            .string()
                            .not_null()
                            .default("admin"),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(ApiKeys::Table)
                    .drop_column(ApiKeys::Scopes)
                    .to_owned(),
            )
            .await
    }
}
