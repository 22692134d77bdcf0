//! A player's view of its match (SPEC 15), the one place that shapes it:
//! the worker sends it in the `matched` status message, the API builds it
//! from the stored match when it reads a matched ticket's status, so a
//! player sees the same match whichever way it reached the client.

use crate::payload::MatchMade;
use serde_json::{json, Value};

/// What the player of `ticket_id` is told of `body` (SPEC 15): `matchId`,
/// `gameMode`, `createdAt`, `teams` as arrays of player ids (in match-shape
/// order), the player's own entry `player` (`playerId`, `ticketId`, `team`
/// index, `partyId`, `mmr`, `latencyMs`, `waitSeconds`), `region` and
/// `quality`. Other players' MMR and ping stay out (the studio's webhook
/// and views have them). `latencyMs` and `region` are `null` until modes
/// have regions. `None` if the ticket is not in the match.
pub fn player_match(body: &MatchMade, ticket_id: &str) -> Option<Value> {
    let (team, own) = body.teams.iter().find_map(|team| {
        team.players
            .iter()
            .find(|p| p.ticket_id == ticket_id)
            .map(|p| (team.index, p))
    })?;
    let teams: Vec<Vec<&str>> = body
        .teams
        .iter()
        .map(|t| t.players.iter().map(|p| p.player_id.as_str()).collect())
        .collect();
    let created_at = body
        .created_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut view = json!({
        "matchId": body.match_id,
        "gameMode": body.game_mode,
        "createdAt": created_at,
        "teams": teams,
        "player": {
            "playerId": own.player_id,
            "ticketId": own.ticket_id,
            "team": team,
            "partyId": own.party_id,
            "mmr": own.mmr,
            "latencyMs": own.latency_ms,
            "waitSeconds": own.wait_seconds,
        },
        "region": body.region,
        "quality": body.quality,
    });
    // A backfilled player is told so (SPEC 10); the match's own players'
    // view is unchanged.
    if own.backfill {
        view["player"]["backfill"] = json!(true);
    }
    Some(view)
}
