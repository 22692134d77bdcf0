//! `project_webhooks`: a project's one webhook endpoint, used by every mode
//! with `webhook.useProjectEndpoint` (docs/webhooks.md).

use sea_orm::entity::prelude::*;

/// The webhook endpoint of one project.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "project_webhooks")]
pub struct Model {
    /// Owning project (one endpoint per project).
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: String,
    /// Destination URL (checked like a mode's `webhook.url`).
    pub url: String,
    /// Whether events are sent.
    pub enabled: bool,
    /// The event type names sent (`["match.made", …]`); `None` for every
    /// type.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub event_types: Option<Json>,
    /// `whsec_` + base64 of 32 random bytes.
    pub webhook_secret: String,
    /// The secret before the last rotation, still signing until
    /// `previous_secret_expires_at` (24 hours, docs/webhook-secret-rotation.md).
    pub previous_webhook_secret: Option<String>,
    /// End of the previous secret's grace period.
    pub previous_secret_expires_at: Option<DateTimeUtc>,
    /// Older rotated-out secrets still in grace, as on `game_modes` (see
    /// [`crate::repos::webhook_secrets`]).
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub older_webhook_secrets: Option<Json>,
    /// When the endpoint was first set.
    pub created_at: DateTimeUtc,
    /// When it last changed (a rotation included).
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
