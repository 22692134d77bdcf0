//! `api_keys`: a project's keys. The key itself is never stored: only its
//! SHA-256 (hex) and a short visible prefix to recognise it by (docs/api-keys.md).

use sea_orm::entity::prelude::*;

/// One key row.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    /// `key_<ulid>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The project the key acts for.
    pub project_id: String,
    /// A label chosen at creation.
    pub name: String,
    /// First characters of the key, e.g. `mp_sk_AbCd`.
    pub prefix: String,
    /// Lower-case hex SHA-256 of the whole key.
    #[sea_orm(unique)]
    pub hash: String,
    /// When the key was created.
    pub created_at: DateTimeUtc,
    /// Last time the key authenticated a request (updated at most once a minute).
    pub last_used_at: Option<DateTimeUtc>,
    /// When the key was revoked; a revoked key authenticates nothing.
    pub revoked_at: Option<DateTimeUtc>,
    /// What the key may do: scope names separated by spaces (`admin`,
    /// `backend`); the API parses them.
    pub scopes: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
