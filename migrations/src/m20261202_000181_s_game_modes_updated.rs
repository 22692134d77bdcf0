//! `game_modes (updated_at)`: the worker's incremental listing of modes
//! (`worker/src/modes.rs`) reads the modes changed since its last pass,
//! every second; with 10 000 modes and more, an index range scan instead of
//! a scan of the whole table.

use crate::ops::create_index;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of `game_modes`.
#[derive(DeriveIden, Clone, Copy)]
enum GameModes {
    Table,
    UpdatedAt,
}

/// The index of this migration.
const MODES_BY_UPDATED: &str = "idx_game_modes_updated_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_index(
            manager,
            MODES_BY_UPDATED,
            GameModes::Table,
            [GameModes::UpdatedAt],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(MODES_BY_UPDATED)
                    .table(GameModes::Table)
                    .to_owned(),
            )
            .await
    }
}
