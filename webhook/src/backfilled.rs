//! The `match.backfilled` body (docs/backfill.md): the new players one fill seated
//! in a running match, and the seats still open. Its `webhook-id` is the
//! fill's id (`bff_…`).

use crate::payload::{Player, Team};
use chrono::{DateTime, Utc};
use matchplane_matchmaker::ProposedFill;
use serde::{Deserialize, Serialize};

/// `{"type":"match.backfilled","matchId","backfillId","fillId",…,"teams",
/// "openSeatsLeft"}`.
///
/// In the OpenAPI document: component `MatchBackfilledEvent`, with its
/// `type` added by the API's document pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MatchBackfilledEvent))]
#[serde(rename_all = "camelCase")]
pub struct MatchBackfilled {
    /// The running match (`mat_…`).
    pub match_id: String,
    /// The request filled (`bf_…`).
    pub backfill_id: String,
    /// This fill (`bff_…`), also the `webhook-id`.
    pub fill_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The game mode's config version the fill was made under.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub game_mode_version: i64,
    /// When the fill was claimed (RFC 3339, UTC, milliseconds).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// The teams that got players, each with only its new players (as in
    /// `match.made`, each marked `"backfill": true`).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::payload::TeamWire>))]
    pub teams: Vec<Team>,
    /// Open seats per team after this fill.
    pub open_seats_left: Vec<u32>,
    /// In a role-queue mode, open seats per team and role after this fill
    /// (docs/rules.md, "Backfill by role"); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<HashMap<String, u32>>>, nullable = false))]
    pub open_roles_left: Vec<matchplane_matchmaker::roles::open::OpenRoles>,
}

/// Identity of a fill, with which a [`ProposedFill`] becomes a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FillIdentity {
    /// `bff_…`.
    pub fill_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The game mode's config version.
    pub game_mode_version: i64,
    /// When the fill was claimed.
    pub created_at: DateTime<Utc>,
}

impl MatchBackfilled {
    /// The body of a fill the core proposed.
    pub fn new(identity: FillIdentity, fill: &ProposedFill) -> Self {
        Self {
            match_id: fill.match_id.to_string(),
            backfill_id: fill.backfill_id.to_string(),
            fill_id: identity.fill_id,
            project_id: identity.project_id,
            game_mode: identity.game_mode,
            game_mode_version: identity.game_mode_version,
            created_at: identity.created_at,
            teams: fill
                .teams
                .iter()
                .map(|t| {
                    let mut team = Team::from(t);
                    for p in &mut team.players {
                        p.backfill = true;
                    }
                    team
                })
                .collect(),
            open_seats_left: fill.open_seats_left.clone(),
            open_roles_left: fill.open_roles_left.clone(),
        }
    }

    /// Every new player with its team index.
    pub fn players(&self) -> impl Iterator<Item = (usize, &Player)> {
        self.teams
            .iter()
            .flat_map(|t| t.players.iter().map(move |p| (t.index, p)))
    }
}
