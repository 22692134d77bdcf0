//! `webhook_deliveries`: one event to deliver and its retry state (docs/webhooks.md).

use sea_orm::entity::prelude::*;

/// One delivery row.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    /// `dlv_<ulid>`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// Owning project.
    pub project_id: String,
    /// Game mode name.
    pub game_mode: String,
    /// The match delivered (`None` for `webhook.test`).
    pub match_id: Option<String>,
    /// `match.made` or `webhook.test`.
    pub event_type: String,
    /// The exact body bytes sent (and signed).
    pub payload: String,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    /// Attempts made so far.
    pub attempt_count: i32,
    /// When the next attempt is due (`None` once finished).
    pub next_attempt_at: Option<DateTimeUtc>,
    /// A worker holds the delivery until then (at-least-once hand-over).
    pub locked_until: Option<DateTimeUtc>,
    /// The claim holding the delivery (`None` when not held): every write
    /// of an attempt compares it, so a worker whose lock ran out cannot
    /// write over the one that took the delivery on.
    pub lock_token: Option<String>,
    /// `attempt_count` when the current run began (a redelivery starts a
    /// new run); the retry schedule counts the attempts after it.
    pub attempts_before_run: i32,
    /// When the delivery was queued.
    pub created_at: DateTimeUtc,
    /// When the delivery last changed.
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
