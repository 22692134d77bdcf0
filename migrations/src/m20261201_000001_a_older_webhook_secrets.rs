//! `game_modes.older_webhook_secrets`: secrets rotated out before the
//! previous one whose 24 hours have not run out yet. Without it a second
//! rotation within 24 hours overwrote the previous secret, which then
//! stopped signing at once. A JSON array of `{"secret", "expiresAt"}`;
//! `NULL` (or `[]`) when there are none.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::json_binary_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum GameModes {
    Table,
    OlderWebhookSecrets,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            GameModes::Table,
            json_binary_null(GameModes::OlderWebhookSecrets),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, GameModes::Table, GameModes::OlderWebhookSecrets).await
    }
}
