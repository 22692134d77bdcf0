//! Tiers (docs/game-modes.md#tier-limits): read by everyone, changed by the operator.

use crate::entities::tier::{self, Entity as Tiers};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::Tier;
use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, QueryOrder, Set};

/// All tiers, ordered by `requestsPerSecond` (free first).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<tier::Model>, StoreError> {
    Ok(Tiers::find()
        .order_by_asc(tier::Column::RequestsPerSecond)
        .all(db)
        .await?)
}

/// One tier by name.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown name.
pub async fn get<C: ConnectionTrait>(db: &C, name: &str) -> Result<tier::Model, StoreError> {
    Tiers::find_by_id(name.to_owned())
        .one(db)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Creates or replaces the tier `tier.name` with the numbers of `tier`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn put<C: ConnectionTrait>(
    db: &C,
    tier: &Tier,
    now: DateTime<Utc>,
) -> Result<tier::Model, StoreError> {
    let existing = Tiers::find_by_id(tier.name.clone()).one(db).await?;
    let model = tier::ActiveModel {
        name: Set(tier.name.clone()),
        min_cycle_duration_seconds: Set(tier.min_cycle_duration_seconds),
        min_base_tolerance: Set(tier.min_base_tolerance),
        min_expansion_multiplier: Set(tier.min_expansion_multiplier),
        max_match_size: Set(i64::from(tier.max_match_size)),
        max_game_modes: Set(i64::from(tier.max_game_modes)),
        max_concurrent_searches: Set(
            i64::try_from(tier.max_concurrent_searches).unwrap_or(i64::MAX)
        ),
        requests_per_second: Set(i64::from(tier.requests_per_second)),
        max_pending_tickets: Set(i64::try_from(tier.max_pending_tickets).unwrap_or(i64::MAX)),
        retention_days: Set(i32::try_from(tier.retention_days).unwrap_or(i32::MAX)),
        created_at: Set(existing.as_ref().map_or(now, |t| t.created_at)),
        updated_at: Set(now),
    };
    Ok(if existing.is_some() {
        model.update(db).await?
    } else {
        model.insert(db).await?
    })
}
