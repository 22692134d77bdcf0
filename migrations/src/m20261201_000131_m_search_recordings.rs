//! `search_recordings`: a game mode's recorded search starts, cancels and
//! ends (the mode's `recording` block, issue 22), one compact row per
//! event: Unix milliseconds, the kind (0 start, 1 cancel, 2 end), the
//! keyed hash of the player id (never the id), MMR, latencies written
//! `region=ms|…`, the party's hashed id and members' hashed ids (`|`
//! separated), and an end's outcome. Read by time window per mode, pruned
//! by the mode's retention in batches; a project's rows go with it.
//! A recording is kept at most its tier's `retentionDays` (the column is
//! added by `000171_r_retention_days`).

use crate::ops::{create_index, create_table, drop_table, project_cascade};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, double_null, small_integer, string, text_null};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum SearchRecordings {
    Table,
    Id,
    ProjectId,
    GameMode,
    AtMs,
    Event,
    PlayerHash,
    Mmr,
    Latencies,
    PartyHash,
    PartyMembers,
    Outcome,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(SearchRecordings::Table)
                .col(
                    big_integer(SearchRecordings::Id)
                        .auto_increment()
                        .primary_key(),
                )
                .col(string(SearchRecordings::ProjectId))
                .col(string(SearchRecordings::GameMode))
                .col(big_integer(SearchRecordings::AtMs))
                .col(small_integer(SearchRecordings::Event))
                .col(string(SearchRecordings::PlayerHash))
                .col(double_null(SearchRecordings::Mmr))
                .col(text_null(SearchRecordings::Latencies))
                .col(text_null(SearchRecordings::PartyHash))
                .col(text_null(SearchRecordings::PartyMembers))
                .col(text_null(SearchRecordings::Outcome))
                .foreign_key(&mut project_cascade(
                    SearchRecordings::Table,
                    SearchRecordings::ProjectId,
                )),
        )
        .await?;
        // Reads and pruning go by mode and time.
        create_index(
            manager,
            "search_recordings_mode_at",
            SearchRecordings::Table,
            [
                SearchRecordings::ProjectId,
                SearchRecordings::GameMode,
                SearchRecordings::AtMs,
            ],
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, SearchRecordings::Table).await
    }
}
