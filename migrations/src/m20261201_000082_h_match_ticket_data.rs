//! `match_tickets.data`: each seated ticket's `attributes.data`, kept as
//! the exact text the studio sent (a `text` column, not JSON, so neither
//! database re-orders or re-formats it), for the match views; and an index
//! on `match_id`, by which the views read a match's tickets.

use crate::ops::{add_column, create_index, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::text_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum MatchTickets {
    Table,
    MatchId,
    Data,
}

/// The index of a match's tickets.
const BY_MATCH: &str = "idx_match_tickets_match_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(manager, MatchTickets::Table, text_null(MatchTickets::Data)).await?;
        create_index(
            manager,
            BY_MATCH,
            MatchTickets::Table,
            [MatchTickets::MatchId],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(BY_MATCH)
                    .table(MatchTickets::Table)
                    .to_owned(),
            )
            .await?;
        drop_column(manager, MatchTickets::Table, MatchTickets::Data).await
    }
}
