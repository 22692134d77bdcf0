//! `backfills.open_roles` (docs/rules.md, "Backfill by role"): in a
//! role-queue mode, the open seats of each team by role as last recorded
//! (`[{"any": 0, "damage": 1, "tank": 0}, …]`), written with `open_seats`
//! at open, at a new roster and at each fill. `NULL` in a mode without
//! `composition`.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::json_binary_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Backfills {
    Table,
    OpenRoles,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            Backfills::Table,
            json_binary_null(Backfills::OpenRoles),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, Backfills::Table, Backfills::OpenRoles).await
    }
}
