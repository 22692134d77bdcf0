//! `mode_stats_minutes`: a game mode's figures over time, one row per mode
//! per minute in which the mode had searches or made matches (an idle
//! minute has no row), written by the worker after each cycle and read by
//! `GET …/game-modes/{name}/stats/history`. Percentiles are kept as
//! histograms of fixed buckets (JSON arrays of counts), so minutes merge
//! into any longer bucket by adding counts. Rows older than 14 days are
//! pruned by the worker in batches.

use crate::ops::{create_index, create_table, drop_table, key, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, string, text, timestamp_with_time_zone};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ModeStatsMinutes {
    Table,
    ProjectId,
    GameMode,
    Minute,
    Cycles,
    SearchingSum,
    SearchingMax,
    Matches,
    MatchedPlayers,
    WaitHistogram,
    SpreadHistogram,
    Proposals,
    Declines,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(ModeStatsMinutes::Table)
                .col(string(ModeStatsMinutes::ProjectId))
                .col(string(ModeStatsMinutes::GameMode))
                .col(timestamp_with_time_zone(ModeStatsMinutes::Minute))
                .col(big_integer(ModeStatsMinutes::Cycles).default(0))
                .col(big_integer(ModeStatsMinutes::SearchingSum).default(0))
                .col(big_integer(ModeStatsMinutes::SearchingMax).default(0))
                .col(big_integer(ModeStatsMinutes::Matches).default(0))
                .col(big_integer(ModeStatsMinutes::MatchedPlayers).default(0))
                .col(text(ModeStatsMinutes::WaitHistogram))
                .col(text(ModeStatsMinutes::SpreadHistogram))
                .col(big_integer(ModeStatsMinutes::Proposals).default(0))
                .col(big_integer(ModeStatsMinutes::Declines).default(0))
                .col(timestamp_with_time_zone(ModeStatsMinutes::UpdatedAt))
                .primary_key(&mut key([
                    ModeStatsMinutes::ProjectId,
                    ModeStatsMinutes::GameMode,
                    ModeStatsMinutes::Minute,
                ]))
                .foreign_key(&mut project_cascade(
                    ModeStatsMinutes::Table,
                    ModeStatsMinutes::ProjectId,
                )),
        )
        .await?;
        // The pruning pass finds the oldest rows of every mode by minute.
        create_index(
            manager,
            "mode_stats_minutes_minute",
            ModeStatsMinutes::Table,
            [ModeStatsMinutes::Minute],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, ModeStatsMinutes::Table).await
    }
}
