//! `match_tickets`: one row per ticket seated in a stored match, written in
//! the match's transaction, with the ticket's token hash. A matched ticket
//! stays readable from here (its token checked against the hash) when the
//! ticket store (Redis) no longer holds its record.

use crate::ops::{create_table, drop_table};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{double, string};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum MatchTickets {
    Table,
    TicketId,
    MatchId,
    ProjectId,
    GameMode,
    PlayerId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(MatchTickets::Table)
                .col(string(MatchTickets::TicketId).primary_key())
                .col(string(MatchTickets::MatchId))
                .col(string(MatchTickets::ProjectId))
                .col(string(MatchTickets::GameMode))
                .col(string(MatchTickets::PlayerId))
                .col(string(MatchTickets::TokenHash))
                .col(double(MatchTickets::CreatedAt))
                .col(double(MatchTickets::ExpiresAt)),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, MatchTickets::Table).await
    }
}
