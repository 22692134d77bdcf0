//! Matches, webhook deliveries and their attempts (filled by the worker).

use crate::names::{Matches, WebhookAttempts, WebhookDeliveries};
use crate::ops::{cascade, create_index, create_table, drop_table, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, integer, integer_null, json_binary, string, string_null, text, text_null,
    timestamp_with_time_zone, timestamp_with_time_zone_null,
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(Matches::Table)
                .col(string(Matches::Id).primary_key())
                .col(string(Matches::ProjectId))
                .col(string(Matches::GameMode))
                .col(big_integer(Matches::GameModeVersion))
                .col(json_binary(Matches::Teams))
                .col(json_binary(Matches::Quality))
                .col(timestamp_with_time_zone(Matches::CreatedAt))
                .foreign_key(&mut project_cascade(Matches::Table, Matches::ProjectId)),
        )
        .await?;
        create_index(
            manager,
            "idx_matches_project_created",
            Matches::Table,
            [Matches::ProjectId, Matches::CreatedAt],
        )
        .await?;

        create_table(
            manager,
            Table::create()
                .table(WebhookDeliveries::Table)
                .col(string(WebhookDeliveries::Id).primary_key())
                .col(string(WebhookDeliveries::ProjectId))
                .col(string(WebhookDeliveries::GameMode))
                .col(string_null(WebhookDeliveries::MatchId))
                .col(string(WebhookDeliveries::EventType))
                .col(text(WebhookDeliveries::Payload))
                .col(string(WebhookDeliveries::Status))
                .col(integer(WebhookDeliveries::AttemptCount).default(0))
                .col(timestamp_with_time_zone_null(
                    WebhookDeliveries::NextAttemptAt,
                ))
                .col(timestamp_with_time_zone_null(
                    WebhookDeliveries::LockedUntil,
                ))
                .col(timestamp_with_time_zone(WebhookDeliveries::CreatedAt))
                .col(timestamp_with_time_zone(WebhookDeliveries::UpdatedAt))
                .foreign_key(&mut project_cascade(
                    WebhookDeliveries::Table,
                    WebhookDeliveries::ProjectId,
                ))
                .foreign_key(&mut cascade(
                    WebhookDeliveries::Table,
                    WebhookDeliveries::MatchId,
                    Matches::Table,
                    Matches::Id,
                )),
        )
        .await?;
        create_index(
            manager,
            "idx_webhook_deliveries_due",
            WebhookDeliveries::Table,
            [WebhookDeliveries::Status, WebhookDeliveries::NextAttemptAt],
        )
        .await?;
        create_index(
            manager,
            "idx_webhook_deliveries_match",
            WebhookDeliveries::Table,
            [WebhookDeliveries::ProjectId, WebhookDeliveries::MatchId],
        )
        .await?;

        create_table(
            manager,
            Table::create()
                .table(WebhookAttempts::Table)
                .col(string(WebhookAttempts::Id).primary_key())
                .col(string(WebhookAttempts::DeliveryId))
                .col(string(WebhookAttempts::ProjectId))
                .col(timestamp_with_time_zone(WebhookAttempts::AttemptedAt))
                .col(integer_null(WebhookAttempts::StatusCode))
                .col(big_integer(WebhookAttempts::LatencyMs))
                .col(text_null(WebhookAttempts::Error))
                .col(text_null(WebhookAttempts::ResponseBody))
                .foreign_key(&mut cascade(
                    WebhookAttempts::Table,
                    WebhookAttempts::DeliveryId,
                    WebhookDeliveries::Table,
                    WebhookDeliveries::Id,
                )),
        )
        .await?;
        create_index(
            manager,
            "idx_webhook_attempts_delivery",
            WebhookAttempts::Table,
            [WebhookAttempts::DeliveryId, WebhookAttempts::AttemptedAt],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, WebhookAttempts::Table).await?;
        drop_table(manager, WebhookDeliveries::Table).await?;
        drop_table(manager, Matches::Table).await
    }
}
