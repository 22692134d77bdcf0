//! `matches.match_shape` and `matches.seats_open`: the shape a match was
//! made with (a relaxed shape, a settled flexible match's team sizes) and
//! the seats it leaves open per team (JSON arrays of integers). Nullable:
//! matches stored before have neither, and read as the full base shape.

use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Matches {
    Table,
    MatchShape,
    SeatsOpen,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000062_f_match_shape"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        for column in [Matches::MatchShape, Matches::SeatsOpen] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Matches::Table)
                        .add_column(ColumnDef::new(column).json_binary().null())
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Matches::SeatsOpen, Matches::MatchShape] {
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
