//! `match_tickets` keyed by ticket and match, not by ticket alone: a ticket
//! whose match was released (or unassigned) searches again with the same
//! token and may be seated in another match (docs/acceptance.md,
//! "Releasing a match"). Keyed by ticket, the second match's row was never
//! stored (the insert leaves a taken key alone), so that match's views
//! carried none of its players' `data`, and a lost ticket's status read
//! the released match instead.
//!
//! PostgreSQL changes the primary key in place; SQLite cannot, so the table
//! is built again with its rows and its index on `match_id`. Down keeps
//! each ticket's latest match (the greatest `mat_…` id, a ULID) only.

use crate::ops::{create_index, create_table, key};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{double, string, text_null};
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

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
    Data,
}

/// The table SQLite builds again before it takes `match_tickets`' name.
#[derive(DeriveIden, Clone, Copy)]
enum MatchTicketsNew {
    Table,
}

/// The index of a match's tickets (migration `h_match_ticket_data`).
const BY_MATCH: &str = "idx_match_tickets_match_id";

/// Every column, in the order the table is built.
const COLUMNS: &str =
    "ticket_id, match_id, project_id, game_mode, player_id, token_hash, created_at, expires_at, data";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        rekey(manager, &[MatchTickets::TicketId, MatchTickets::MatchId]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "DELETE FROM match_tickets WHERE match_id < \
                 (SELECT MAX(m.match_id) FROM match_tickets m WHERE m.ticket_id = match_tickets.ticket_id)",
            )
            .await?;
        rekey(manager, &[MatchTickets::TicketId]).await
    }
}

/// Makes `cols` the primary key of `match_tickets`.
async fn rekey(manager: &SchemaManager<'_>, cols: &[MatchTickets]) -> Result<(), DbErr> {
    let db = manager.get_connection();
    if manager.get_database_backend() != DatabaseBackend::Sqlite {
        let names: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
        return db
            .execute_unprepared(&format!(
                "ALTER TABLE match_tickets DROP CONSTRAINT match_tickets_pkey, \
                 ADD PRIMARY KEY ({})",
                names.join(", ")
            ))
            .await
            .map(|_| ());
    }
    create_table(
        manager,
        Table::create()
            .table(MatchTicketsNew::Table)
            .col(string(MatchTickets::TicketId))
            .col(string(MatchTickets::MatchId))
            .col(string(MatchTickets::ProjectId))
            .col(string(MatchTickets::GameMode))
            .col(string(MatchTickets::PlayerId))
            .col(string(MatchTickets::TokenHash))
            .col(double(MatchTickets::CreatedAt))
            .col(double(MatchTickets::ExpiresAt))
            .col(text_null(MatchTickets::Data))
            .primary_key(&mut key(cols.iter().copied())),
    )
    .await?;
    db.execute_unprepared(&format!(
        "INSERT INTO match_tickets_new ({COLUMNS}) SELECT {COLUMNS} FROM match_tickets"
    ))
    .await?;
    db.execute_unprepared("DROP TABLE match_tickets").await?;
    db.execute_unprepared("ALTER TABLE match_tickets_new RENAME TO match_tickets")
        .await?;
    create_index(
        manager,
        BY_MATCH,
        MatchTickets::Table,
        [MatchTickets::MatchId],
    )
    .await
}
