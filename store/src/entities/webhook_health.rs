//! `webhook_health`: the delivery health of one game mode's webhook,
//! written by the worker after every attempt (see
//! [`crate::repos::webhook_health`]).

use sea_orm::entity::prelude::*;

/// The health of one mode's webhook.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_health")]
pub struct Model {
    /// Owning project.
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: String,
    /// Game mode name.
    #[sea_orm(primary_key, auto_increment = false)]
    pub game_mode: String,
    /// Attempts failed in a row since the last success (0: healthy).
    pub consecutive_failures: i64,
    /// The first of those failed attempts; `None` while healthy.
    pub failing_since: Option<DateTimeUtc>,
    /// What the last failed attempt came to (an HTTP status or an error
    /// naming no URL).
    pub last_error: Option<String>,
    /// When the last failed attempt was made.
    pub last_failure_at: Option<DateTimeUtc>,
    /// When the last successful attempt was made.
    pub last_success_at: Option<DateTimeUtc>,
    /// Last write.
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
