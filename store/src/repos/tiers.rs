//! Tiers (docs/game-modes.md#tier-limits): read by everyone, changed by the operator.

use crate::entities::project::{self, Entity as Projects};
use crate::entities::tier::{self, Entity as Tiers};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::Tier;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, Set, SqlErr,
};

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

/// A tier as [`put`] wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The stored tier.
    pub tier: tier::Model,
    /// Whether it was created (there was no tier of that name).
    pub created: bool,
}

/// Creates or replaces the tier `tier.name` with the numbers of `tier`.
///
/// # Errors
/// [`StoreError::Conflict`] when a tier of that name was created
/// meanwhile; [`StoreError::Db`] on a database failure.
pub async fn put<C: ConnectionTrait>(
    db: &C,
    tier: &Tier,
    now: DateTime<Utc>,
) -> Result<Written, StoreError> {
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
        Written {
            tier: model.update(db).await?,
            created: false,
        }
    } else {
        Written {
            tier: model.insert(db).await?,
            created: true,
        }
    })
}

/// What [`delete`] did with a tier that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// The tier is gone.
    Deleted,
    /// Kept: `projects` projects are on it.
    InUse {
        /// How many projects are on the tier.
        projects: u64,
    },
}

/// How many projects are on tier `name`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn projects_on<C: ConnectionTrait>(db: &C, name: &str) -> Result<u64, StoreError> {
    Ok(Projects::find()
        .filter(project::Column::Tier.eq(name))
        .count(db)
        .await?)
}

/// Deletes tier `name` unless a project is on it. A project moved onto it
/// between the count and the delete is caught by the projects' foreign
/// key, which refuses the delete: that is [`Deletion::InUse`] too.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown name; [`StoreError::Db`] on a
/// database failure.
pub async fn delete<C: ConnectionTrait>(db: &C, name: &str) -> Result<Deletion, StoreError> {
    let projects = projects_on(db, name).await?;
    if projects > 0 {
        return Ok(Deletion::InUse { projects });
    }
    match Tiers::delete_by_id(name.to_owned()).exec(db).await {
        Ok(done) if done.rows_affected == 0 => Err(StoreError::NotFound),
        Ok(_) => Ok(Deletion::Deleted),
        Err(err)
            if matches!(
                err.sql_err(),
                Some(SqlErr::ForeignKeyConstraintViolation(_))
            ) =>
        {
            Ok(Deletion::InUse {
                projects: projects_on(db, name).await?.max(1),
            })
        }
        Err(err) => Err(err.into()),
    }
}
