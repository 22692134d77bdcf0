//! `outbox_dead_letters`: outbox records the worker could not read as a
//! match, kept as received before their entry was acknowledged (docs/architecture.md).

use sea_orm::entity::prelude::*;

/// One dead-lettered outbox entry.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "outbox_dead_letters")]
pub struct Model {
    /// Owning project.
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: String,
    /// Game mode name (the outbox the entry was in).
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode: String,
    /// The outbox entry id (a Redis stream id).
    #[sea_orm(primary_key, auto_increment = false)]
    pub outbox_id: String,
    /// The `mat_…` id the claim gave the entry.
    pub match_id: String,
    /// The record as it was in the outbox.
    pub record: String,
    /// Why it could not be read.
    pub error: String,
    /// When it was dead-lettered.
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
