//! An index of the matches still `proposed`, by mode and id: the worker
//! looks once a minute for a mode's proposals past their deadline that
//! Redis no longer holds (docs/acceptance.md, "When a proposal is lost").
//! Partial, so it holds the few open proposals only, and that look reads
//! them without scanning the mode's made matches. The same statement
//! builds it on PostgreSQL and SQLite.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The index's name.
const PROPOSED: &str = "idx_matches_proposed";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "CREATE INDEX IF NOT EXISTS {PROPOSED} ON matches (project_id, game_mode, id) \
                 WHERE status = 'proposed'"
            ))
            .await
            .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!("DROP INDEX IF EXISTS {PROPOSED}"))
            .await
            .map(|_| ())
    }
}
