//! `project_webhooks`: one webhook endpoint per project (docs/webhooks.md,
//! "One endpoint for every mode of a project"). Modes with
//! `webhook.useProjectEndpoint` deliver there, signed with this row's own
//! secret; its rotation keeps the same columns as a game mode's
//! (`previous_webhook_secret`, `previous_secret_expires_at`,
//! `older_webhook_secrets`, docs/webhook-secret-rotation.md).
//! `event_types` is a JSON array of event type names, `NULL` for every type.

use crate::ops::{create_table, drop_table, key, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    boolean, json_binary_null, string, string_null, timestamp_with_time_zone,
    timestamp_with_time_zone_null,
};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ProjectWebhooks {
    Table,
    ProjectId,
    Url,
    Enabled,
    EventTypes,
    WebhookSecret,
    PreviousWebhookSecret,
    PreviousSecretExpiresAt,
    OlderWebhookSecrets,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(ProjectWebhooks::Table)
                .col(string(ProjectWebhooks::ProjectId))
                .col(string(ProjectWebhooks::Url))
                .col(boolean(ProjectWebhooks::Enabled))
                .col(json_binary_null(ProjectWebhooks::EventTypes))
                .col(string(ProjectWebhooks::WebhookSecret))
                .col(string_null(ProjectWebhooks::PreviousWebhookSecret))
                .col(timestamp_with_time_zone_null(
                    ProjectWebhooks::PreviousSecretExpiresAt,
                ))
                .col(json_binary_null(ProjectWebhooks::OlderWebhookSecrets))
                .col(timestamp_with_time_zone(ProjectWebhooks::CreatedAt))
                .col(timestamp_with_time_zone(ProjectWebhooks::UpdatedAt))
                .primary_key(&mut key([ProjectWebhooks::ProjectId]))
                .foreign_key(&mut project_cascade(
                    ProjectWebhooks::Table,
                    ProjectWebhooks::ProjectId,
                )),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, ProjectWebhooks::Table).await
    }
}
