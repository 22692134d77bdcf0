//! `search_recordings`: one recorded search event of a game mode with
//! `recording` enabled (see `matchplane_matchmaker::recording`).

use sea_orm::entity::prelude::*;

/// One recorded event.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "search_recordings")]
pub struct Model {
    /// Insertion order (ties of `at_ms` keep it).
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Owning project.
    pub project_id: String,
    /// Game mode name.
    pub game_mode: String,
    /// When it happened (Unix milliseconds).
    pub at_ms: i64,
    /// 0 a search start, 1 a cancel, 2 any other end (see `outcome`).
    pub event: i16,
    /// Keyed hash of the player id (lower-case hex), never the id.
    pub player_hash: String,
    /// The ticket's MMR (starts).
    pub mmr: Option<f64>,
    /// The ticket's latencies, `region=ms|…` (starts).
    pub latencies: Option<String>,
    /// Keyed hash of the party id (starts in a party).
    pub party_hash: Option<String>,
    /// The party members' hashed ids, `|` separated, in the party's order.
    pub party_members: Option<String>,
    /// An end's outcome: `expired`, `expired:<REASON>` or `failed:<CODE>`.
    pub outcome: Option<String>,
    /// A start's declared attributes (docs/rules.md) as JSON text, with
    /// `playerSet` entries hashed like player ids; `NULL` without.
    pub attributes: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
