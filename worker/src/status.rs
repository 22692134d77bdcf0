//! The status messages a worker publishes to a search's client (SPEC 4):
//! `matched` (with the player's view of the match), `failed` (with its
//! code) and `expired`. Publishing is fire and forget: a client that was
//! not listening reads the search's state when it subscribes.
//!
//! [`player_match`] is the one place that shapes a player's view of its
//! match; the API builds the same view from the stored match
//! ([`body_of_row`]) when it reads a matched ticket's status, so a
//! `matched` message carries the same match whichever way it reached the
//! client.

use crate::webhook::payload::{Quality, Team};
use crate::webhook::MatchMade;
use matchplane_store::entities::match_;
use matchplane_store::pool::PoolStore;
use serde_json::{json, Value};

/// `{"type":"matched","match":{…}}`, `match` being `ticket_id`'s view of
/// the match ([`player_match`]).
pub fn matched(player_view: &Value) -> String {
    json!({ "type": "matched", "match": player_view }).to_string()
}

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
    Some(json!({
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
            "latencyMs": Value::Null,
            "waitSeconds": own.wait_seconds,
        },
        "region": Value::Null,
        "quality": body.quality,
    }))
}

/// The `match.made` body of a stored match (the studio's view of it is
/// this body, serialised).
///
/// # Errors
/// The stored `teams` or `quality` cannot be read as a match's.
pub fn body_of_row(row: &match_::Model) -> Result<MatchMade, serde_json::Error> {
    let teams: Vec<Team> = serde_json::from_value(row.teams.clone())?;
    let quality: Quality = serde_json::from_value(row.quality.clone())?;
    Ok(MatchMade {
        match_id: row.id.clone(),
        project_id: row.project_id.clone(),
        game_mode: row.game_mode.clone(),
        game_mode_version: row.game_mode_version,
        created_at: row.created_at,
        teams,
        quality,
    })
}

/// `{"type":"failed","code":…,"message":…}`.
pub fn failed(code: &str, message: &str) -> String {
    json!({ "type": "failed", "code": code, "message": message }).to_string()
}

/// `{"type":"expired"}`.
pub fn expired() -> String {
    json!({ "type": "expired" }).to_string()
}

/// Publishes `message` to `ticket_id`'s subscribers; a failure is logged
/// (the client reads the state on its next status read).
pub async fn publish(pool: &dyn PoolStore, ticket_id: &str, message: &str) {
    if let Err(err) = pool.publish_status(ticket_id, message).await {
        tracing::warn!(%ticket_id, error = %err, "status publish failed");
    }
}
