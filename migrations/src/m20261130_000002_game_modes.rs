//! Game modes (current config + version + webhook secrets) and their history.

use crate::m20261130_000001_tenancy::ts;
use crate::names::{GameModeVersions, GameModes, Projects};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000002_game_modes"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GameModes::Table)
                    .col(
                        ColumnDef::new(GameModes::Id)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(GameModes::ProjectId).string().not_null())
                    .col(ColumnDef::new(GameModes::Name).string().not_null())
                    .col(ColumnDef::new(GameModes::Config).json_binary().not_null())
                    .col(ColumnDef::new(GameModes::Version).big_integer().not_null())
                    .col(ColumnDef::new(GameModes::WebhookSecret).string().not_null())
                    .col(
                        ColumnDef::new(GameModes::PreviousWebhookSecret)
                            .string()
                            .null(),
                    )
                    .col(ts(GameModes::PreviousSecretExpiresAt).null())
                    .col(ts(GameModes::CreatedAt).not_null())
                    .col(ts(GameModes::UpdatedAt).not_null())
                    .foreign_key(
                        ForeignKey::create()
                            .from(GameModes::Table, GameModes::ProjectId)
                            .to(Projects::Table, Projects::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("uq_game_modes_project_name")
                    .table(GameModes::Table)
                    .col(GameModes::ProjectId)
                    .col(GameModes::Name)
                    .unique()
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(GameModeVersions::Table)
                    .col(
                        ColumnDef::new(GameModeVersions::GameModeId)
                            .string()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GameModeVersions::Version)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GameModeVersions::ProjectId)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(GameModeVersions::Name).string().not_null())
                    .col(
                        ColumnDef::new(GameModeVersions::Config)
                            .json_binary()
                            .not_null(),
                    )
                    .col(ts(GameModeVersions::CreatedAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(GameModeVersions::GameModeId)
                            .col(GameModeVersions::Version),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(GameModeVersions::Table, GameModeVersions::ProjectId)
                            .to(Projects::Table, Projects::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GameModeVersions::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(GameModes::Table).to_owned())
            .await
    }
}
