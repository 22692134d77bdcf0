//! A player's view of its match (SPEC 15), the one place that shapes it:
//! the worker sends it in the `matched` status message, the API builds it
//! from the stored match when it reads a matched ticket's status, so a
//! player sees the same match whichever way it reached the client.

use crate::payload::{MatchMade, Quality};
use matchplane_matchmaker::RawJson;
use serde::Serialize;

/// The JSON of a player's view (see [`player_match`]).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PlayerMatch<'a> {
    match_id: &'a str,
    game_mode: &'a str,
    created_at: String,
    teams: Vec<Vec<&'a str>>,
    player: OwnEntry<'a>,
    region: Option<&'a str>,
    quality: &'a Quality,
}

/// The player's own entry of its view.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OwnEntry<'a> {
    player_id: &'a str,
    ticket_id: &'a str,
    team: usize,
    party_id: Option<&'a str>,
    mmr: Option<f64>,
    latency_ms: Option<f64>,
    wait_seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a RawJson>,
    /// `true` for a player a backfill seated (SPEC 10); absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    backfill: bool,
}

/// What the player of `ticket_id` is told of `body` (SPEC 15), as JSON
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
        created_at: body
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
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
        },
        region: body.region.as_deref(),
        quality: &body.quality,
    };
    RawJson::of(&view).ok()
}
