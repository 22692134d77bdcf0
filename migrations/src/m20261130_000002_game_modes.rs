//! Game modes (current config + version + webhook secrets) and their history.

use crate::names::{GameModeVersions, GameModes};
use crate::ops::{create_table, drop_table, index, key, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, json_binary, string, string_null, timestamp_with_time_zone,
    timestamp_with_time_zone_null,
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(GameModes::Table)
                .col(string(GameModes::Id).primary_key())
                .col(string(GameModes::ProjectId))
                .col(string(GameModes::Name))
                .col(json_binary(GameModes::Config))
                .col(big_integer(GameModes::Version))
                .col(string(GameModes::WebhookSecret))
                .col(string_null(GameModes::PreviousWebhookSecret))
                .col(timestamp_with_time_zone_null(
                    GameModes::PreviousSecretExpiresAt,
                ))
                .col(timestamp_with_time_zone(GameModes::CreatedAt))
                .col(timestamp_with_time_zone(GameModes::UpdatedAt))
                .foreign_key(&mut project_cascade(GameModes::Table, GameModes::ProjectId)),
        )
        .await?;
        manager
            .create_index(
                index(
                    "uq_game_modes_project_name",
                    GameModes::Table,
                    [GameModes::ProjectId, GameModes::Name],
                )
                .unique()
                .to_owned(),
            )
            .await?;

        create_table(
            manager,
            Table::create()
                .table(GameModeVersions::Table)
                .col(string(GameModeVersions::GameModeId))
                .col(big_integer(GameModeVersions::Version))
                .col(string(GameModeVersions::ProjectId))
                .col(string(GameModeVersions::Name))
                .col(json_binary(GameModeVersions::Config))
                .col(timestamp_with_time_zone(GameModeVersions::CreatedAt))
                .primary_key(&mut key([
                    GameModeVersions::GameModeId,
                    GameModeVersions::Version,
                ]))
                .foreign_key(&mut project_cascade(
                    GameModeVersions::Table,
                    GameModeVersions::ProjectId,
                )),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, GameModeVersions::Table).await?;
        drop_table(manager, GameModes::Table).await
    }
}
