//! `webhook_health`: the delivery health of each game mode's webhook, one
//! row per mode, written by the worker after every attempt and shown as
//! `webhook.status` in the mode view and its stats: how many attempts
//! failed in a row, since when, the last error; cleared by a success.

use crate::m20261130_000001_tenancy::ts;
use crate::names::Projects;
use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum WebhookHealth {
    Table,
    ProjectId,
    GameMode,
    ConsecutiveFailures,
    FailingSince,
    LastError,
    LastFailureAt,
    LastSuccessAt,
    UpdatedAt,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000051_e_webhook_health"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(WebhookHealth::Table)
                    .col(ColumnDef::new(WebhookHealth::ProjectId).string().not_null())
                    .col(ColumnDef::new(WebhookHealth::GameMode).string().not_null())
                    .col(
                        ColumnDef::new(WebhookHealth::ConsecutiveFailures)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .col(ts(WebhookHealth::FailingSince).null())
                    .col(ColumnDef::new(WebhookHealth::LastError).text().null())
                    .col(ts(WebhookHealth::LastFailureAt).null())
                    .col(ts(WebhookHealth::LastSuccessAt).null())
                    .col(ts(WebhookHealth::UpdatedAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(WebhookHealth::ProjectId)
                            .col(WebhookHealth::GameMode),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookHealth::Table, WebhookHealth::ProjectId)
                            .to(Projects::Table, Projects::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(WebhookHealth::Table).to_owned())
            .await
    }
}
