//! Tiers (seeded with docs/game-modes.md#tier-limits's three), projects and API keys.

use crate::names::{ApiKeys, Projects, Tiers};
use matchplane_matchmaker::Tier;
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000001_tenancy"
    }
}

/// A `timestamp with time zone` column (text on SQLite).
pub(crate) fn ts<T: IntoIden>(name: T) -> ColumnDef {
    let mut col = ColumnDef::new(name);
    col.timestamp_with_time_zone();
    col
}

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
        manager
            .create_table(
                Table::create()
                    .table(Tiers::Table)
                    .col(
                        ColumnDef::new(Tiers::Name)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(Tiers::MinCycleDurationSeconds)
                            .double()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Tiers::MinBaseTolerance).double().not_null())
                    .col(
                        ColumnDef::new(Tiers::MinExpansionMultiplier)
                            .double()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Tiers::MaxMatchSize).big_integer().not_null())
                    .col(ColumnDef::new(Tiers::MaxGameModes).big_integer().not_null())
                    .col(
                        ColumnDef::new(Tiers::MaxConcurrentSearches)
                            .big_integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(Tiers::RequestsPerSecond)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ts(Tiers::CreatedAt).not_null())
                    .col(ts(Tiers::UpdatedAt).not_null())
                    .to_owned(),
            )
            .await?;
        manager.exec_stmt(seed_tiers()?).await?;

        manager
            .create_table(
                Table::create()
                    .table(Projects::Table)
                    .col(
                        ColumnDef::new(Projects::Id)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(Projects::Name).string().not_null())
                    .col(ColumnDef::new(Projects::Tier).string().not_null())
                    .col(ts(Projects::CreatedAt).not_null())
                    .col(ts(Projects::UpdatedAt).not_null())
                    .foreign_key(
                        ForeignKey::create()
                            .from(Projects::Table, Projects::Tier)
                            .to(Tiers::Table, Tiers::Name)
                            .on_delete(ForeignKeyAction::Restrict)
                            .on_update(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ApiKeys::Table)
                    .col(
                        ColumnDef::new(ApiKeys::Id)
                            .string()
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(ApiKeys::ProjectId).string().not_null())
                    .col(ColumnDef::new(ApiKeys::Name).string().not_null())
                    .col(ColumnDef::new(ApiKeys::Prefix).string().not_null())
                    .col(
                        ColumnDef::new(ApiKeys::Hash)
                            .string()
                            .not_null()
                            .unique_key(),
                    )
                    .col(ts(ApiKeys::CreatedAt).not_null())
                    .col(ts(ApiKeys::LastUsedAt).null())
                    .col(ts(ApiKeys::RevokedAt).null())
                    .foreign_key(
                        ForeignKey::create()
                            .from(ApiKeys::Table, ApiKeys::ProjectId)
                            .to(Projects::Table, Projects::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_api_keys_project")
                    .table(ApiKeys::Table)
                    .col(ApiKeys::ProjectId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            ApiKeys::Table.into_iden(),
            Projects::Table.into_iden(),
            Tiers::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
