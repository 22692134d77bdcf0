//! A player's view of its match (docs/architecture.md#where-each-rule-lives), the one place that shapes it:
//! the worker sends it in the `matched` status message, the API builds it
//! from the stored match when it reads a matched ticket's status, so a
//! player sees the same match whichever way it reached the client.

use crate::payload::{MatchMade, Quality};
use matchplane_matchmaker::RawJson;
use serde::Serialize;

/// The JSON of a player's view (see [`player_match`]): the `match` of a
/// `matched` message and of a matched ticket's status as the game client
/// reads it (the OpenAPI document's `PlayerMatch`).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0",
    "gameMode": "duel", "createdAt": "2026-12-01T10:00:03.120Z", "teams": [["ana"], ["ben"]],
    "player": {"playerId": "ana", "ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "team": 0,
        "partyId": null, "mmr": 1500.0, "latencyMs": null, "waitSeconds": 2.4},
    "region": null, "quality": {"mmrSpread": 20.0, "teamImbalance": 20.0}})))]
#[serde(rename_all = "camelCase")]
pub struct PlayerMatch<'a> {
    /// `mat_…`.
    match_id: &'a str,
    /// The game mode's name.
    game_mode: &'a str,
    /// When the match was made (RFC 3339).
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    created_at: String,
    /// The teams in match-shape order, as player ids.
    teams: Vec<Vec<&'a str>>,
    /// The player's own entry.
    player: OwnEntry<'a>,
    /// The region the match is played in; `null` in modes without regions.
    region: Option<&'a str>,
    /// The match's quality.
    #[cfg_attr(feature = "openapi", schema(value_type = Quality))]
    quality: &'a Quality,
    /// What every player agreed on under the mode's rules (docs/rules.md):
    /// each `equal` rule's common value, each `intersect` rule's shared
    /// values, by attribute; absent without rules.
    #[serde(skip_serializing_if = "matchplane_matchmaker::rules::DeclaredValues::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false))]
    attributes: &'a matchplane_matchmaker::rules::DeclaredValues,
}

/// The player's own entry of its view (the OpenAPI document's
/// `PlayerMatchEntry`).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PlayerMatchEntry))]
#[serde(rename_all = "camelCase")]
pub struct OwnEntry<'a> {
    /// The studio's player id.
    player_id: &'a str,
    /// `tkt_…` of the player's search.
    ticket_id: &'a str,
    /// The index of the player's team in `teams`.
    team: usize,
    /// The party id, `null` for a solo player.
    party_id: Option<&'a str>,
    /// The ticket's MMR, if any.
    mmr: Option<f64>,
    /// The player's latency to the match's region (milliseconds); `null`
    /// in modes without regions.
    latency_ms: Option<f64>,
    /// Seconds the search waited until the cycle that matched it.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    wait_seconds: f64,
    /// The ticket's `attributes.data` as the studio sent it; absent when
    /// it had none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>, nullable = false))]
    data: Option<&'a RawJson>,
    /// `true` for a player a backfill seated (docs/backfill.md); absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "openapi", schema(default = false))]
    backfill: bool,
    /// The player's own values of the mode's declared attributes
    /// (docs/rules.md); absent without declarations. Other players'
    /// attributes are never shown.
    #[serde(skip_serializing_if = "matchplane_matchmaker::rules::DeclaredValues::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false))]
    attributes: &'a matchplane_matchmaker::rules::DeclaredValues,
    /// The player's role seat in a mode with `composition` (docs/rules.md,
    /// "Role queues"); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    role: Option<&'a str>,
}

/// What the player of `ticket_id` is told of `body` (docs/architecture.md#where-each-rule-lives), as JSON
/// text: `matchId`, `gameMode`, `createdAt`, `teams` as arrays of player
/// ids (in match-shape order), the player's own entry `player` (`playerId`,
/// `ticketId`, `team` index, `partyId`, `mmr`, `latencyMs`, `waitSeconds`,
/// and its ticket's `data` byte for byte when it had one), `region` and
/// `quality`. Other players' MMR, ping and data stay out (the studio's
/// webhook and views have them). `latencyMs` and `region` are `null` in
/// modes without regions. `None` if the ticket is not in the match.
pub fn player_match(body: &MatchMade, ticket_id: &str) -> Option<RawJson> {
    let (team, own) = body.teams.iter().find_map(|team| {
        team.players
            .iter()
            .find(|p| p.ticket_id == ticket_id)
            .map(|p| (team.index, p))
    })?;
    let view = PlayerMatch {
        match_id: &body.match_id,
        game_mode: &body.game_mode,
        created_at: matchplane_matchmaker::timestamp::format(&body.created_at),
        teams: body
            .teams
            .iter()
            .map(|t| {
                t.players
                    .iter()
                    .filter(|p| !p.left)
                    .map(|p| p.player_id.as_str())
                    .collect()
            })
            .collect(),
        player: OwnEntry {
            player_id: &own.player_id,
            ticket_id: &own.ticket_id,
            team,
            party_id: own.party_id.as_deref(),
            mmr: own.mmr,
            latency_ms: own.latency_ms,
            wait_seconds: own.wait_seconds,
            data: own.data.as_ref(),
            backfill: own.backfill,
            attributes: &own.attributes,
            role: own.role.as_deref(),
        },
        region: body.region.as_deref(),
        quality: &body.quality,
        attributes: &body.attributes,
    };
    RawJson::of(&view).ok()
}
