//! The match lifecycle (docs/acceptance.md, docs/searching.md#statuses): `matches.status` (`proposed`, `made`,
//! `cancelled`, `released`, `unassigned`; rows stored before read `made`),
//! `matches.answers` (a proposal's answer per ticket, JSON object ticketId →
//! `accepted` | `declined` | `timeout` | `none`; `NULL` for a mode without
//! acceptance), `matches.made_at` (when a proposal became the match: the
//! release window counts from it; `NULL` means `created_at`) and
//! `matches.assignment` (the studio's assignment body, JSON; `NULL` until
//! posted).

use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Matches {
    Table,
    Status,
    Answers,
    MadeAt,
    Assignment,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000141_n_match_status"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        let columns = [
            ColumnDef::new(Matches::Status)
                .string()
                .not_null()
                .default("made")
                .to_owned(),
            ColumnDef::new(Matches::Answers)
                .json_binary()
                .null()
                .to_owned(),
            ColumnDef::new(Matches::MadeAt)
                .timestamp_with_time_zone()
                .null()
                .to_owned(),
            ColumnDef::new(Matches::Assignment)
                .json_binary()
                .null()
                .to_owned(),
        ];
        for mut column in columns {
            manager
                .alter_table(
                    Table::alter()
                        .table(Matches::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            Matches::Assignment,
            Matches::MadeAt,
            Matches::Answers,
            Matches::Status,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Matches::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
