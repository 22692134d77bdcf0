//! `game_modes`: the current configuration of each mode (docs/game-modes.md).

use sea_orm::entity::prelude::*;

/// One game mode row.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "game_modes")]
pub struct Model {
    /// `gm_<ulid>`; stable across renames and versions.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Owning project.
    pub project_id: String,
    /// The mode's name, unique in the project.
    pub name: String,
    /// The `GameModeConfig` JSON of docs/game-modes.md, without server-set fields.
    #[sea_orm(column_type = "JsonBinary")]
    pub config: Json,
    /// Starts at 1, +1 on every change.
    pub version: i64,
    /// `whsec_` + base64 of 32 random bytes.
    pub webhook_secret: String,
    /// The secret before the last rotation, still signing until
    /// `previous_secret_expires_at` (docs/webhook-events.md: 24 hours).
    pub previous_webhook_secret: Option<String>,
    /// End of the previous secret's grace period.
    pub previous_secret_expires_at: Option<DateTimeUtc>,
    /// Secrets rotated out before the previous one and still in their own
    /// grace period: a JSON array of `{"secret", "expiresAt"}` (see
    /// [`crate::repos::webhook_secrets`]); `None` when there are none.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub older_webhook_secrets: Option<Json>,
    /// When the mode was created.
    pub created_at: DateTimeUtc,
    /// When the mode last changed.
    pub updated_at: DateTimeUtc,
    /// When the mode's matching was held (docs/game-modes.md, "Holding
    /// matching"); `None` when it is not held. Live state: no version bump.
    pub held_at: Option<DateTimeUtc>,
    /// Who held it: the API key's id (`key_…`), or `operator`.
    pub held_by: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
