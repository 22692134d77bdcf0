//! The `playerSearchScope` `project` checks (docs/project-settings.md,
//! `playerSearchScope`):
//!
//! - at ticket generation, a player with a live search (searching or
//!   proposed) in another mode of the project gets `409
//!   PLAYER_ALREADY_SEARCHING` naming it. Advisory, like the same-mode
//!   check of ticket generation: the pool's add step refuses a search
//!   started meanwhile, atomically;
//! - at ticket generation and at every search start, a player whose match
//!   waits for its assignment (made, in a mode with `assignment`, not yet
//!   assigned, released or unassigned) gets `409 PLAYER_IN_MATCH` naming
//!   the match (`matchId`), the matched ticket and its mode, in every mode
//!   of the project: a player in a match is in no queue
//!   (docs/project-settings.md, `playerSearchScope`).

use super::Play;
use crate::problem::ApiError;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::match_tickets;
use sea_orm::DatabaseConnection;

/// How far back a made match may still wait for its assignment: the
/// longest `assignment.waitSeconds` (600) with room for a worker that is
/// late to time it out; an older one is not looked at.
const ASSIGNMENT_LOOKBACK_SECONDS: i64 = 3_600;

/// `Ok` unless `player_id` has a live search in a mode of `project_id`
/// other than `game_mode` (the first such mode by name).
///
/// # Errors
/// `409 PLAYER_ALREADY_SEARCHING` with `ticketId` and `gameMode`; `500` or
/// `503` when the pool store fails.
pub async fn refuse_if_searching_elsewhere(
    play: &Play,
    project_id: &str,
    game_mode: &str,
    player_id: &str,
) -> Result<(), ApiError> {
    for name in play.pool.modes_with_searches(project_id).await? {
        if name == game_mode {
            continue;
        }
        let mode = ModeKey::new(project_id, &name);
        if let Some(ticket_id) = play.pool.live_ticket_of_player(&mode, player_id).await? {
            return Err(ApiError::player_already_searching(ticket_id, name));
        }
    }
    Ok(())
}

/// `Ok` unless `player_id` is seated in a match of `project_id` that waits
/// for its assignment (made, unassigned, in a mode with `assignment`),
/// other than through `own_ticket` (the ticket starting a search).
///
/// # Errors
/// `409 PLAYER_IN_MATCH` with the `matchId`, the matched `ticketId` and
/// its `gameMode`; `500` or `503` when the database fails.
pub async fn refuse_if_in_match(
    play: &Play,
    db: &DatabaseConnection,
    project_id: &str,
    player_id: &str,
    own_ticket: Option<&str>,
) -> Result<(), ApiError> {
    let since = chrono::Utc::now() - chrono::Duration::seconds(ASSIGNMENT_LOOKBACK_SECONDS);
    let seats = match_tickets::made_unassigned_of_player(db, project_id, player_id, since)
        .await
        .map_err(ApiError::from)?;
    for seat in seats {
        if Some(seat.ticket_id.as_str()) == own_ticket {
            continue;
        }
        let waits = play
            .cache
            .mode(db, project_id, &seat.game_mode)
            .await?
            .is_some_and(|config| config.assignment.is_some());
        if waits {
            return Err(ApiError::player_in_match(
                seat.match_id,
                seat.ticket_id,
                seat.game_mode,
            ));
        }
    }
    Ok(())
}
