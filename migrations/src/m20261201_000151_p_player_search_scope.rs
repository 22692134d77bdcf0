//! `projects.player_search_scope`: the project setting `playerSearchScope`
//! of docs/acceptance.md, `mode` (one live search per player per mode, the default) or
//! `project` (one per player over all the project's modes). Set with `PATCH
//! /v1/projects/{projectId}/settings`; the API passes it to the pool's add
//! step, which enforces it.

use crate::ops::{add_column, drop_column};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::string;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum Projects {
    Table,
    PlayerSearchScope,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            Projects::Table,
            string(Projects::PlayerSearchScope).default("mode"),
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_column(manager, Projects::Table, Projects::PlayerSearchScope).await
    }
}
