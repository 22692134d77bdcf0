//! Ratings per game mode (Glicko-2) and the result reports already applied.

use crate::m20261130_000001_tenancy::ts;
use crate::names::{GameModes, RatingResults, Ratings};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000010_ratings"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Ratings::Table)
                    .col(ColumnDef::new(Ratings::GameModeId).string().not_null())
                    .col(ColumnDef::new(Ratings::PlayerId).string().not_null())
                    .col(ColumnDef::new(Ratings::ProjectId).string().not_null())
                    .col(ColumnDef::new(Ratings::Rating).double().not_null())
                    .col(ColumnDef::new(Ratings::Deviation).double().not_null())
                    .col(ColumnDef::new(Ratings::Volatility).double().not_null())
                    .col(ColumnDef::new(Ratings::Games).big_integer().not_null())
                    .col(ts(Ratings::RatedAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(Ratings::GameModeId)
                            .col(Ratings::PlayerId),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(Ratings::Table, Ratings::GameModeId)
                            .to(GameModes::Table, GameModes::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(RatingResults::Table)
                    .col(
                        ColumnDef::new(RatingResults::GameModeId)
                            .string()
                            .not_null(),
                    )
                    .col(ColumnDef::new(RatingResults::MatchId).string().not_null())
                    .col(ColumnDef::new(RatingResults::ProjectId).string().not_null())
                    .col(ts(RatingResults::CreatedAt).not_null())
                    .primary_key(
                        Index::create()
                            .col(RatingResults::GameModeId)
                            .col(RatingResults::MatchId),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(RatingResults::Table, RatingResults::GameModeId)
                            .to(GameModes::Table, GameModes::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(RatingResults::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Ratings::Table).to_owned())
            .await
    }
}
