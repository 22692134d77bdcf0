//! `game_modes.older_webhook_secrets`: secrets rotated out before the
//! previous one whose 24 hours have not run out yet. Without it a second
//! rotation within 24 hours overwrote the previous secret, which then
//! stopped signing at once. A JSON array of `{"secret", "expiresAt"}`;
//! `NULL` (or `[]`) when there are none.

use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum GameModes {
    Table,
    OlderWebhookSecrets,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000001_a_older_webhook_secrets"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(GameModes::Table)
                    .add_column(
                        ColumnDef::new(GameModes::OlderWebhookSecrets)
                            .json_binary()
                            .null(),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(GameModes::Table)
                    .drop_column(GameModes::OlderWebhookSecrets)
                    .to_owned(),
            )
            .await
    }
}
