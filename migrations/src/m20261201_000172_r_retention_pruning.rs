//! What the worker's retention pruning needs (`worker/src/retention.rs`):
//!
//! - `job_leases`: one row per job that one worker at a time runs (the
//!   pruning), naming its holder until `expires_at_ms` (Unix
//!   milliseconds). Taken and renewed by one upsert that never waits for a
//!   lock beyond that statement.
//! - Indexes that make each pruning batch an index range scan:
//!   `webhook_deliveries (project_id, created_at)` (a project's oldest
//!   deliveries), `webhook_deliveries (match_id)` (a match's deliveries, and
//!   the `ON DELETE CASCADE` check of every deleted match, which would
//!   otherwise scan the table once per match), and `rating_results
//!   (project_id, created_at)`. `matches (project_id, created_at)` and
//!   `match_tickets (match_id)` exist already.

use crate::ops::{create_index, create_table, drop_table};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, string};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of `job_leases`.
#[derive(DeriveIden, Clone, Copy)]
enum JobLeases {
    Table,
    Job,
    Holder,
    ExpiresAtMs,
}

/// Table and column names of `webhook_deliveries`.
#[derive(DeriveIden, Clone, Copy)]
enum WebhookDeliveries {
    Table,
    ProjectId,
    MatchId,
    CreatedAt,
}

/// Table and column names of `rating_results`.
#[derive(DeriveIden, Clone, Copy)]
enum RatingResults {
    Table,
    ProjectId,
    CreatedAt,
}

/// The indexes of this migration: name, table, columns.
const DELIVERIES_BY_CREATED: &str = "idx_webhook_deliveries_project_created";
const DELIVERIES_BY_MATCH: &str = "idx_webhook_deliveries_match_id";
const RESULTS_BY_CREATED: &str = "idx_rating_results_project_created";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(JobLeases::Table)
                .col(string(JobLeases::Job).primary_key())
                .col(string(JobLeases::Holder))
                .col(big_integer(JobLeases::ExpiresAtMs)),
        )
        .await?;
        create_index(
            manager,
            DELIVERIES_BY_CREATED,
            WebhookDeliveries::Table,
            [WebhookDeliveries::ProjectId, WebhookDeliveries::CreatedAt],
        )
        .await?;
        create_index(
            manager,
            DELIVERIES_BY_MATCH,
            WebhookDeliveries::Table,
            [WebhookDeliveries::MatchId],
        )
        .await?;
        create_index(
            manager,
            RESULTS_BY_CREATED,
            RatingResults::Table,
            [RatingResults::ProjectId, RatingResults::CreatedAt],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, table) in [
            (DELIVERIES_BY_CREATED, WebhookDeliveries::Table.into_iden()),
            (DELIVERIES_BY_MATCH, WebhookDeliveries::Table.into_iden()),
            (RESULTS_BY_CREATED, RatingResults::Table.into_iden()),
        ] {
            manager
                .drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        drop_table(manager, JobLeases::Table).await
    }
}
