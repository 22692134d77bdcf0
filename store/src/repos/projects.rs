//! Projects (docs/api-keys.md): the tenants, managed by the operator.

use crate::entities::idempotency_key::{self, Entity as IdempotencyKeys};
use crate::entities::match_ticket::{self, Entity as MatchTickets};
use crate::entities::mode_cycle_stat::{self, Entity as CycleStats};
use crate::entities::outbox_dead_letter::{self, Entity as DeadLetters};
use crate::entities::project::{self, Entity as Projects};
use crate::entities::tier::Entity as Tiers;
use crate::pool::PlayerSearchScope;
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, ModelTrait,
    QueryFilter, QueryOrder, Select, Set, TransactionTrait,
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

/// `message` of a deleted project's searches, failed `GAME_MODE_DISABLED`:
/// the live ones at the worker's sweep, the matched ones whose match went
/// with the project when their status is read (docs/searching.md).
pub const DELETED_MESSAGE: &str = "the project was deleted";

/// Deletes a project with every row of it (docs/retention.md, "Deleting a
/// project"), in one transaction: the rows of the tables without a foreign
/// key to `projects` (seated tickets, cycle figures, outbox dead letters,
/// idempotency keys) by an explicit delete, then the project, whose delete
/// cascades to its keys, modes (with their ratings), matches, deliveries
/// (with their attempts), backfills, stats history, recordings, webhook
/// health and project webhook.
///
/// # Errors
/// [`StoreError::NotFound`] when there is no such project.
pub async fn delete<C: TransactionTrait>(db: &C, project_id: &str) -> Result<(), StoreError> {
    let txn = db.begin().await?;
    let current = get(&txn, project_id).await?;
    MatchTickets::delete_many()
        .filter(match_ticket::Column::ProjectId.eq(project_id))
        .exec(&txn)
        .await?;
    CycleStats::delete_many()
        .filter(mode_cycle_stat::Column::ProjectId.eq(project_id))
        .exec(&txn)
        .await?;
    DeadLetters::delete_many()
        .filter(outbox_dead_letter::Column::ProjectId.eq(project_id))
        .exec(&txn)
        .await?;
    IdempotencyKeys::delete_many()
        .filter(idempotency_key::Column::ProjectId.eq(project_id))
        .exec(&txn)
        .await?;
    current.delete(&txn).await?;
    txn.commit().await?;
    Ok(())
}
