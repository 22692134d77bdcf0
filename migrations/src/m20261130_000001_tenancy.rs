//! Tiers (seeded with SPEC 2's three), projects and API keys.

use crate::names::{ApiKeys, Projects, Tiers};
use crate::ops::{create_index, create_table, drop_table, project_cascade};
use matchplane_matchmaker::Tier;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, double, string, string_uniq, timestamp_with_time_zone,
    timestamp_with_time_zone_null,
};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn seed_tiers() -> Result<InsertStatement, DbErr> {
    let mut insert = Query::insert();
    insert.into_table(Tiers::Table).columns([
        Tiers::Name,
        Tiers::MinCycleDurationSeconds,
        Tiers::MinBaseTolerance,
        Tiers::MinExpansionMultiplier,
        Tiers::MaxMatchSize,
        Tiers::MaxGameModes,
        Tiers::MaxConcurrentSearches,
        Tiers::RequestsPerSecond,
        Tiers::CreatedAt,
        Tiers::UpdatedAt,
    ]);
    for tier in Tier::seeded() {
        insert
            .values([
                tier.name.into(),
                tier.min_cycle_duration_seconds.into(),
                tier.min_base_tolerance.into(),
                tier.min_expansion_multiplier.into(),
                i64::from(tier.max_match_size).into(),
                i64::from(tier.max_game_modes).into(),
                <i64 as TryFrom<u64>>::try_from(tier.max_concurrent_searches)
                    .unwrap_or(i64::MAX)
                    .into(),
                i64::from(tier.requests_per_second).into(),
                Expr::current_timestamp().into(),
                Expr::current_timestamp().into(),
            ])
            .map_err(|e| DbErr::Custom(format!("tier seed: {e}")))?;
    }
    Ok(insert)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table(
            manager,
            Table::create()
                .table(Tiers::Table)
                .col(string(Tiers::Name).primary_key())
                .col(double(Tiers::MinCycleDurationSeconds))
                .col(double(Tiers::MinBaseTolerance))
                .col(double(Tiers::MinExpansionMultiplier))
                .col(big_integer(Tiers::MaxMatchSize))
                .col(big_integer(Tiers::MaxGameModes))
                .col(big_integer(Tiers::MaxConcurrentSearches))
                .col(big_integer(Tiers::RequestsPerSecond))
                .col(timestamp_with_time_zone(Tiers::CreatedAt))
                .col(timestamp_with_time_zone(Tiers::UpdatedAt)),
        )
        .await?;
        manager.exec_stmt(seed_tiers()?).await?;

        create_table(
            manager,
            Table::create()
                .table(Projects::Table)
                .col(string(Projects::Id).primary_key())
                .col(string(Projects::Name))
                .col(string(Projects::Tier))
                .col(timestamp_with_time_zone(Projects::CreatedAt))
                .col(timestamp_with_time_zone(Projects::UpdatedAt))
                // A tier in use cannot be deleted; a renamed one follows.
                .foreign_key(
                    ForeignKey::create()
                        .from(Projects::Table, Projects::Tier)
                        .to(Tiers::Table, Tiers::Name)
                        .on_delete(ForeignKeyAction::Restrict)
                        .on_update(ForeignKeyAction::Cascade),
                ),
        )
        .await?;

        create_table(
            manager,
            Table::create()
                .table(ApiKeys::Table)
                .col(string(ApiKeys::Id).primary_key())
                .col(string(ApiKeys::ProjectId))
                .col(string(ApiKeys::Name))
                .col(string(ApiKeys::Prefix))
                .col(string_uniq(ApiKeys::Hash))
                .col(timestamp_with_time_zone(ApiKeys::CreatedAt))
                .col(timestamp_with_time_zone_null(ApiKeys::LastUsedAt))
                .col(timestamp_with_time_zone_null(ApiKeys::RevokedAt))
                .foreign_key(&mut project_cascade(ApiKeys::Table, ApiKeys::ProjectId)),
        )
        .await?;
        create_index(
            manager,
            "idx_api_keys_project",
            ApiKeys::Table,
            [ApiKeys::ProjectId],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table(manager, ApiKeys::Table).await?;
        drop_table(manager, Projects::Table).await?;
        drop_table(manager, Tiers::Table).await
    }
}
