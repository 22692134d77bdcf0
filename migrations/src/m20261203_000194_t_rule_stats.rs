//! `mode_stats_minutes.rule_turned_away` (docs/rules.md, "Why a player is
//! still waiting"; docs/api-tour.md, the stats history): per rule over
//! attributes, the candidates it turned away in the minute's cycles, added
//! up, as a JSON object of counts by rule name (`{"same-build": 12}`).
//! `NULL` for a minute in which no rule turned anyone away (every minute of
//! a mode without rules). Text, as the minute's histograms are: the row is
//! read and merged whole by the worker, never queried by its content.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::text_null;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum ModeStatsMinutes {
    Table,
    RuleTurnedAway,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            ModeStatsMinutes::Table,
            text_null(ModeStatsMinutes::RuleTurnedAway),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(
            manager,
            ModeStatsMinutes::Table,
            ModeStatsMinutes::RuleTurnedAway,
        )
        .await
    }
}
