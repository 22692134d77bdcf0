//! `webhook_health`: the delivery health of each game mode's webhook, one
//! row per mode, written by the worker after every attempt and shown as
//! `webhook.status` in the mode view and its stats: how many attempts
//! failed in a row, since when, the last error; cleared by a success.

use crate::ops::{create_table, drop_table, key, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, string, text_null, timestamp_with_time_zone, timestamp_with_time_zone_null,
};

#[derive(DeriveMigrationName)]
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

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(WebhookHealth::Table)
                .col(string(WebhookHealth::ProjectId))
                .col(string(WebhookHealth::GameMode))
                .col(big_integer(WebhookHealth::ConsecutiveFailures).default(0))
                .col(timestamp_with_time_zone_null(WebhookHealth::FailingSince))
                .col(text_null(WebhookHealth::LastError))
                .col(timestamp_with_time_zone_null(WebhookHealth::LastFailureAt))
                .col(timestamp_with_time_zone_null(WebhookHealth::LastSuccessAt))
                .col(timestamp_with_time_zone(WebhookHealth::UpdatedAt))
                .primary_key(&mut key([
                    WebhookHealth::ProjectId,
                    WebhookHealth::GameMode,
                ]))
                .foreign_key(&mut project_cascade(
                    WebhookHealth::Table,
                    WebhookHealth::ProjectId,
                )),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, WebhookHealth::Table).await
    }
}
