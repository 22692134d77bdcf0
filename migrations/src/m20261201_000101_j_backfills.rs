//! `backfills` and `backfill_fills` (docs/backfill.md): a studio's requests to fill
//! the open seats of a running match, and each fill the worker recorded.
//!
//! `open_match_id` holds the match id while a request is open and is
//! `NULL` otherwise: its unique index is "one open request per match" on
//! PostgreSQL and SQLite alike (both let many rows be `NULL`).

use crate::ops::{create_index, create_table, drop_table, index, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, integer, json_binary, string, string_null, timestamp_with_time_zone,
};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of `backfills`.
#[derive(DeriveIden, Clone, Copy)]
enum Backfills {
    Table,
    Id,
    ProjectId,
    GameMode,
    MatchId,
    OpenMatchId,
    Status,
    Roster,
    OpenSeats,
    Fills,
    SeatsFilled,
    Revision,
    CreatedAt,
    UpdatedAt,
    ExpiresAt,
}

/// Table and column names of `backfill_fills`.
#[derive(DeriveIden, Clone, Copy)]
enum BackfillFills {
    Table,
    Id,
    BackfillId,
    ProjectId,
    MatchId,
    Teams,
    OpenSeatsLeft,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(Backfills::Table)
                .col(string(Backfills::Id).primary_key())
                .col(string(Backfills::ProjectId))
                .col(string(Backfills::GameMode))
                .col(string(Backfills::MatchId))
                .col(string_null(Backfills::OpenMatchId))
                .col(string(Backfills::Status))
                .col(json_binary(Backfills::Roster))
                .col(json_binary(Backfills::OpenSeats))
                .col(integer(Backfills::Fills))
                .col(integer(Backfills::SeatsFilled))
                .col(big_integer(Backfills::Revision))
                .col(timestamp_with_time_zone(Backfills::CreatedAt))
                .col(timestamp_with_time_zone(Backfills::UpdatedAt))
                .col(timestamp_with_time_zone(Backfills::ExpiresAt))
                .foreign_key(&mut project_cascade(Backfills::Table, Backfills::ProjectId)),
        )
        .await?;
        manager
            .create_index(
                index(
                    "idx_backfills_open_match",
                    Backfills::Table,
                    [Backfills::OpenMatchId],
                )
                .unique()
                .to_owned(),
            )
            .await?;
        create_index(
            manager,
            "idx_backfills_project_match",
            Backfills::Table,
            [Backfills::ProjectId, Backfills::MatchId],
        )
        .await?;
        create_table(
            manager,
            Table::create()
                .table(BackfillFills::Table)
                .col(string(BackfillFills::Id).primary_key())
                .col(string(BackfillFills::BackfillId))
                .col(string(BackfillFills::ProjectId))
                .col(string(BackfillFills::MatchId))
                .col(json_binary(BackfillFills::Teams))
                .col(json_binary(BackfillFills::OpenSeatsLeft))
                .col(timestamp_with_time_zone(BackfillFills::CreatedAt))
                .foreign_key(&mut project_cascade(
                    BackfillFills::Table,
                    BackfillFills::ProjectId,
                )),
        )
        .await?;
        create_index(
            manager,
            "idx_backfill_fills_backfill",
            BackfillFills::Table,
            [BackfillFills::BackfillId, BackfillFills::CreatedAt],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, BackfillFills::Table).await?;
        drop_table(manager, Backfills::Table).await
    }
}
