//! `backfill_fills`: each fill of a backfill request (docs/backfill.md), written by
//! the worker's outbox consumer with its `match.backfilled` delivery.

use sea_orm::entity::prelude::*;

/// One fill.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "backfill_fills")]
pub struct Model {
    /// `bff_<ulid>`: also the `webhook-id` of its `match.backfilled`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    /// The request filled (`bf_…`).
    pub backfill_id: String,
    /// Owning project.
    pub project_id: String,
    /// The match (`mat_…`).
    pub match_id: String,
    /// The new players by team, as in the webhook's `teams`.
    #[sea_orm(column_type = "JsonBinary")]
    pub teams: Json,
    /// Open seats per team after this fill.
    #[sea_orm(column_type = "JsonBinary")]
    pub open_seats_left: Json,
    /// When the fill was claimed.
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
