//! The columns of rules over attributes (docs/rules.md):
//! `matches.attributes`, what every player of a match agreed on, as a JSON
//! object by attribute (`NULL` for matches of modes without rules), and
//! `search_recordings.attributes`, a recorded start's declared attributes
//! as JSON text with `playerSet` entries hashed like player ids.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{json_binary_null, text_null};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Matches {
    Table,
    Attributes,
}

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum SearchRecordings {
    Table,
    Attributes,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            Matches::Table,
            json_binary_null(Matches::Attributes),
        )
        .await?;
        add_column(
            manager,
            SearchRecordings::Table,
            text_null(SearchRecordings::Attributes),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, Matches::Table, Matches::Attributes).await?;
        drop_column(
            manager,
            SearchRecordings::Table,
            SearchRecordings::Attributes,
        )
        .await
    }
}
