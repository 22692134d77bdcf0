//! Where a missing `attributes.mmr` may come from in a mode with `ratings`
//! (docs/game-modes.md): the player's stored rating. A hook, so the ratings store can
//! plug in without the ticket route knowing how ratings are kept.

use async_trait::async_trait;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::repos::{game_modes, ratings, StoreError};

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

/// A stored `rating` as the ticket's MMR in `config`'s mode: within the
/// MMR algorithm's `minMmr` and `maxMmr` (docs/ratings.md, "Ratings as
/// MMR"). A rating the player earned past the range seats them at its edge;
/// the studio never sent it, so it is never refused as an `mmr` out of range.
pub fn within_range(config: &GameModeConfig, rating: f64) -> f64 {
    match &config.algorithm {
        matchplane_matchmaker::Algorithm::Mmr {
            min_mmr, max_mmr, ..
        } if min_mmr <= max_mmr => rating.clamp(*min_mmr, *max_mmr),
        _ => rating,
    }
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

/// Stored ratings standing in for a missing ticket `mmr` in a mode with
/// ratings enabled: the player's rating, or the mode's `initialRating` for a
/// player never rated (the "the stored rating (or the initial one)").
pub struct StoredRatings {
    db: sea_orm::DatabaseConnection,
}

impl StoredRatings {
    /// Over the control-plane database.
    pub fn new(db: sea_orm::DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait]
impl RatingsLookup for StoredRatings {
    async fn mmr_of(
        &self,
        project_id: &str,
        game_mode: &str,
        player_id: &str,
    ) -> Result<Option<f64>, String> {
        let mode = match game_modes::get(&self.db, project_id, game_mode).await {
            Ok(mode) => mode,
            Err(StoreError::NotFound) => return Ok(None),
            Err(err) => return Err(err.to_string()),
        };
        let config: GameModeConfig =
            serde_json::from_value(mode.config).map_err(|e| e.to_string())?;
        let Some(ratings_config) = config.ratings.filter(|r| r.enabled) else {
            return Ok(None);
        };
        let row = ratings::get(&self.db, &mode.id, player_id)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Some(
            row.map_or(ratings_config.initial_rating, |r| r.rating),
        ))
    }
}
