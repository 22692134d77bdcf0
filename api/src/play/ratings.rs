//! Where a missing `attributes.mmr` may come from in a mode with `ratings`
//! (docs/game-modes.md): the player's stored rating. A hook, so the ratings store can
//! plug in without the ticket route knowing how ratings are kept.

use async_trait::async_trait;

/// Looks up a player's stored MMR in a mode.
#[async_trait]
pub trait RatingsLookup: Send + Sync {
    /// The player's stored rating as an MMR, if any. Errors are reported as
    /// text and answered `500 INTERNAL` (never shown).
    async fn mmr_of(
        &self,
        project_id: &str,
        game_mode: &str,
        player_id: &str,
    ) -> Result<Option<f64>, String>;
}

/// No stored ratings: a missing `mmr` stays missing (`MMR_REQUIRED`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoRatings;

#[async_trait]
impl RatingsLookup for NoRatings {
    async fn mmr_of(&self, _: &str, _: &str, _: &str) -> Result<Option<f64>, String> {
        Ok(None)
    }
}
