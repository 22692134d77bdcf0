//! `projects`: the tenants (docs/api-keys.md).

use sea_orm::entity::prelude::*;

/// One project row.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "projects")]
pub struct Model {
    /// `prj_<ulid>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Display name chosen by the operator.
    pub name: String,
    /// Name of the project's tier (`tiers.name`).
    pub tier: String,
    /// `playerSearchScope` (docs/acceptance.md): `mode` (the default) or `project`.
    pub player_search_scope: String,
    /// When the project was created.
    pub created_at: DateTimeUtc,
    /// When the project last changed.
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
