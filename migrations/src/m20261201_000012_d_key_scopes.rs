//! `api_keys.scopes`: what a key may do, as space-separated scope names
//! (`admin`, `backend`). Keys that existed before this migration could do
//! everything, so they become `admin`: their behaviour is unchanged.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::string;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ApiKeys {
    Table,
    Scopes,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            ApiKeys::Table,
            string(ApiKeys::Scopes).default("admin"),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, ApiKeys::Table, ApiKeys::Scopes).await
    }
}
