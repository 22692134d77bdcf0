//! `match_tickets`: each ticket seated in a stored match, with its token
//! hash, written in the match's transaction (docs/architecture.md#where-each-rule-lives), so a matched ticket
//! stays readable when the ticket store no longer holds its record. One
//! row per ticket and match: a ticket whose match was released may be
//! seated in another (docs/acceptance.md, "Releasing a match"), and each
//! match keeps its own players' `data`.

use sea_orm::entity::prelude::*;

/// One ticket of a stored match.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "match_tickets")]
pub struct Model {
    /// The `tkt_…` id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub ticket_id: String,
    /// The `mat_…` id of the match that seated it.
    #[sea_orm(primary_key, auto_increment = false)]
    pub match_id: String,
    /// Owning project.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The studio's player id.
    pub player_id: String,
    /// Lower-case hex SHA-256 of the ticket's token.
    pub token_hash: String,
    /// When the ticket was generated (Unix seconds).
    pub created_at: f64,
    /// When the ticket's token stops being valid (Unix seconds).
    pub expires_at: f64,
    /// The ticket's `attributes.data`, the exact text the studio sent;
    /// `NULL` without (and for matches stored before it was kept).
    #[sea_orm(column_type = "Text", nullable)]
    pub data: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
