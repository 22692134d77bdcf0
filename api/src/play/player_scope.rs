//! The `playerSearchScope` `project` check at ticket generation (SPEC 9):
//! a player with a live search (searching or proposed) in another mode of
//! the project gets `409 PLAYER_ALREADY_SEARCHING` naming it. Advisory,
//! like the same-mode check of ticket generation: the pool's add step
//! refuses a search started meanwhile, atomically.

use super::Play;
use crate::problem::ApiError;
use matchplane_store::pool::ModeKey;

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
