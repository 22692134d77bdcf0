//! Projects (docs/api-keys.md): the tenants, managed by the operator.

use crate::entities::project::{self, Entity as Projects};
use crate::entities::tier::Entity as Tiers;
use crate::pool::PlayerSearchScope;
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, ModelTrait,
    QueryFilter, QueryOrder, Select, Set,
};

/// The one way into a project row: by its id.
pub fn scoped(project_id: &str) -> Select<Projects> {
    Projects::find().filter(project::Column::Id.eq(project_id))
}

async fn ensure_tier<C: ConnectionTrait>(db: &C, tier: &str) -> Result<(), StoreError> {
    match Tiers::find_by_id(tier.to_owned()).one(db).await? {
        Some(_) => Ok(()),
        None => Err(StoreError::UnknownReference("tier")),
    }
}

/// Creates a project `prj_<ulid>` on `tier`.
///
/// # Errors
/// [`StoreError::UnknownReference`] when the tier does not exist.
pub async fn create<C: ConnectionTrait>(
    db: &C,
    name: &str,
    tier: &str,
    now: DateTime<Utc>,
) -> Result<project::Model, StoreError> {
    ensure_tier(db, tier).await?;
    let model = project::ActiveModel {
        id: Set(format!("prj_{}", ulid::Ulid::new())),
        name: Set(name.to_owned()),
        tier: Set(tier.to_owned()),
        player_search_scope: Set(PlayerSearchScope::default().as_str().to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
    };
    Ok(model.insert(db).await?)
}

/// All projects, oldest first.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn list<C: ConnectionTrait>(db: &C) -> Result<Vec<project::Model>, StoreError> {
    Ok(Projects::find()
        .order_by_asc(project::Column::CreatedAt)
        .order_by_asc(project::Column::Id)
        .all(db)
        .await?)
}

/// One project.
///
/// # Errors
/// [`StoreError::NotFound`] when there is no such project.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
) -> Result<project::Model, StoreError> {
    scoped(project_id)
        .one(db)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Changes a project's name and/or tier.
///
/// # Errors
/// [`StoreError::NotFound`], or [`StoreError::UnknownReference`] for an
/// unknown tier.
pub async fn update<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: Option<&str>,
    tier: Option<&str>,
    now: DateTime<Utc>,
) -> Result<project::Model, StoreError> {
    let current = get(db, project_id).await?;
    if let Some(tier) = tier {
        ensure_tier(db, tier).await?;
    }
    let mut model = current.into_active_model();
    if let Some(name) = name {
        model.name = Set(name.to_owned());
    }
    if let Some(tier) = tier {
        model.tier = Set(tier.to_owned());
    }
    model.updated_at = Set(now);
    Ok(model.update(db).await?)
}

/// A project's `playerSearchScope`; a stored word this build does not know
/// reads as the default.
pub fn player_search_scope(project: &project::Model) -> PlayerSearchScope {
    PlayerSearchScope::parse(&project.player_search_scope).unwrap_or_default()
}

/// Sets a project's `playerSearchScope` (docs/acceptance.md).
///
/// # Errors
/// [`StoreError::NotFound`] when there is no such project.
pub async fn set_player_search_scope<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    scope: PlayerSearchScope,
    now: DateTime<Utc>,
) -> Result<project::Model, StoreError> {
    let mut model = get(db, project_id).await?.into_active_model();
    model.player_search_scope = Set(scope.as_str().to_owned());
    model.updated_at = Set(now);
    Ok(model.update(db).await?)
}

/// Deletes a project and, by cascade, its keys, modes, matches and deliveries.
///
/// # Errors
/// [`StoreError::NotFound`] when there is no such project.
pub async fn delete<C: ConnectionTrait>(db: &C, project_id: &str) -> Result<(), StoreError> {
    let current = get(db, project_id).await?;
    current.delete(db).await?;
    Ok(())
}
