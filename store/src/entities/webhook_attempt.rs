//! `webhook_attempts`: one HTTP attempt of a delivery (docs/webhooks.md).

use sea_orm::entity::prelude::*;

/// One attempt row.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_attempts")]
pub struct Model {
    /// `att_<ulid>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The delivery attempted.
    pub delivery_id: String,
    /// Owning project.
    pub project_id: String,
    /// When the attempt started.
    pub attempted_at: DateTimeUtc,
    /// HTTP status answered (`None` on timeout or connection error).
    pub status_code: Option<i32>,
    /// Time to the answer (milliseconds).
    pub latency_ms: i64,
    /// Timeout or connection error, if any.
    pub error: Option<String>,
    /// First 1 KiB of the answer body.
    pub response_body: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
