//! Ratings per game mode (Glicko-2) and the result reports already applied.

use crate::names::{GameModes, RatingResults, Ratings};
use crate::ops::{cascade, create_table, drop_table, key};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, double, string, timestamp_with_time_zone};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(Ratings::Table)
                .col(string(Ratings::GameModeId))
                .col(string(Ratings::PlayerId))
                .col(string(Ratings::ProjectId))
                .col(double(Ratings::Rating))
                .col(double(Ratings::Deviation))
                .col(double(Ratings::Volatility))
                .col(big_integer(Ratings::Games))
                .col(timestamp_with_time_zone(Ratings::RatedAt))
                .primary_key(&mut key([Ratings::GameModeId, Ratings::PlayerId]))
                .foreign_key(&mut cascade(
                    Ratings::Table,
                    Ratings::GameModeId,
                    GameModes::Table,
                    GameModes::Id,
                )),
        )
        .await?;
        create_table(
            manager,
            Table::create()
                .table(RatingResults::Table)
                .col(string(RatingResults::GameModeId))
                .col(string(RatingResults::MatchId))
                .col(string(RatingResults::ProjectId))
                .col(timestamp_with_time_zone(RatingResults::CreatedAt))
                .primary_key(&mut key([
                    RatingResults::GameModeId,
                    RatingResults::MatchId,
                ]))
                .foreign_key(&mut cascade(
                    RatingResults::Table,
                    RatingResults::GameModeId,
                    GameModes::Table,
                    GameModes::Id,
                )),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, RatingResults::Table).await?;
        drop_table(manager, Ratings::Table).await
    }
}
