//! Matches, webhook deliveries and their attempts (filled by the worker).

use crate::m20261130_000001_tenancy::ts;
use crate::names::{Matches, Projects, WebhookAttempts, WebhookDeliveries};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000003_matches_webhooks"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Matches::Table)
                    .col(
                        ColumnDef::new(Matches::Id)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(Matches::ProjectId).string().not_null())
                    .col(ColumnDef::new(Matches::GameMode).string().not_null())
                    .col(
                        ColumnDef::new(Matches::GameModeVersion)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Matches::Teams).json_binary().not_null())
                    .col(ColumnDef::new(Matches::Quality).json_binary().not_null())
                    .col(ts(Matches::CreatedAt).not_null())
                    .foreign_key(
                        ForeignKey::create()
                            .from(Matches::Table, Matches::ProjectId)
                            .to(Projects::Table, Projects::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_matches_project_created")
                    .table(Matches::Table)
                    .col(Matches::ProjectId)
                    .col(Matches::CreatedAt)
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(WebhookDeliveries::Table)
                    .col(
                        ColumnDef::new(WebhookDeliveries::Id)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(WebhookDeliveries::ProjectId)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(WebhookDeliveries::GameMode)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(WebhookDeliveries::MatchId).string().null())
                    .col(
                        ColumnDef::new(WebhookDeliveries::EventType)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(WebhookDeliveries::Payload).text().not_null())
                    .col(
                        ColumnDef::new(WebhookDeliveries::Status)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(WebhookDeliveries::AttemptCount)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .col(ts(WebhookDeliveries::NextAttemptAt).null())
                    .col(ts(WebhookDeliveries::LockedUntil).null())
                    .col(ts(WebhookDeliveries::CreatedAt).not_null())
                    .col(ts(WebhookDeliveries::UpdatedAt).not_null())
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookDeliveries::Table, WebhookDeliveries::ProjectId)
                            .to(Projects::Table, Projects::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookDeliveries::Table, WebhookDeliveries::MatchId)
                            .to(Matches::Table, Matches::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_webhook_deliveries_due")
                    .table(WebhookDeliveries::Table)
                    .col(WebhookDeliveries::Status)
                    .col(WebhookDeliveries::NextAttemptAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_webhook_deliveries_match")
                    .table(WebhookDeliveries::Table)
                    .col(WebhookDeliveries::ProjectId)
                    .col(WebhookDeliveries::MatchId)
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(WebhookAttempts::Table)
                    .col(
                        ColumnDef::new(WebhookAttempts::Id)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(WebhookAttempts::DeliveryId)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(WebhookAttempts::ProjectId)
                            .string()
                            .not_null(),
                    )
                    .col(ts(WebhookAttempts::AttemptedAt).not_null())
                    .col(ColumnDef::new(WebhookAttempts::StatusCode).integer().null())
                    .col(
                        ColumnDef::new(WebhookAttempts::LatencyMs)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(WebhookAttempts::Error).text().null())
                    .col(ColumnDef::new(WebhookAttempts::ResponseBody).text().null())
                    .foreign_key(
                        ForeignKey::create()
                            .from(WebhookAttempts::Table, WebhookAttempts::DeliveryId)
                            .to(WebhookDeliveries::Table, WebhookDeliveries::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_webhook_attempts_delivery")
                    .table(WebhookAttempts::Table)
                    .col(WebhookAttempts::DeliveryId)
                    .col(WebhookAttempts::AttemptedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WebhookAttempts::Table.into_iden(),
            WebhookDeliveries::Table.into_iden(),
            Matches::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
