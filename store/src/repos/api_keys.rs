//! API keys (docs/api-keys.md): stored as SHA-256 hash + visible prefix, revocable.

use crate::entities::api_key::{self, Entity as ApiKeys};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, QueryFilter,
    QueryOrder, Select, Set,
};

/// The one way into a project's keys.
pub fn scoped(project_id: &str) -> Select<ApiKeys> {
    ApiKeys::find().filter(api_key::Column::ProjectId.eq(project_id))
}

/// What to store for a new key: never the key itself.
#[derive(Debug, Clone)]
pub struct NewKey<'a> {
    /// Label chosen by the caller.
    pub name: &'a str,
    /// First characters of the key, shown in listings.
    pub prefix: &'a str,
    /// Lower-case hex SHA-256 of the key.
    pub hash: &'a str,
    /// Scope names separated by spaces, e.g. `backend`.
    pub scopes: &'a str,
}

/// Stores a new key `key_<ulid>` of `project_id` (the project must exist).
///
/// # Errors
/// [`StoreError::Conflict`] if the hash already exists (a collision: retry).
pub async fn create<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    key: NewKey<'_>,
    now: DateTime<Utc>,
) -> Result<api_key::Model, StoreError> {
    let model = api_key::ActiveModel {
        id: Set(format!("key_{}", ulid::Ulid::new())),
        project_id: Set(project_id.to_owned()),
        name: Set(key.name.to_owned()),
        prefix: Set(key.prefix.to_owned()),
        hash: Set(key.hash.to_owned()),
        created_at: Set(now),
        last_used_at: Set(None),
        revoked_at: Set(None),
        scopes: Set(key.scopes.to_owned()),
    };
    Ok(model.insert(db).await?)
}

/// A project's keys, revoked ones included, oldest first.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn list<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
) -> Result<Vec<api_key::Model>, StoreError> {
    Ok(scoped(project_id)
        .order_by_asc(api_key::Column::CreatedAt)
        .order_by_asc(api_key::Column::Id)
        .all(db)
        .await?)
}

/// Revokes a key of `project_id` (idempotent: the first revocation time stays).
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such key.
pub async fn revoke<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<api_key::Model, StoreError> {
    let key = scoped(project_id)
        .filter(api_key::Column::Id.eq(key_id))
        .one(db)
        .await?
        .ok_or(StoreError::NotFound)?;
    if key.revoked_at.is_some() {
        return Ok(key);
    }
    let mut model = key.into_active_model();
    model.revoked_at = Set(Some(now));
    Ok(model.update(db).await?)
}

/// The live (not revoked) key with this hash, if any. This is the
/// authentication lookup, so it is the one query not scoped by project: the
/// key is what tells the project.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn find_active_by_hash<C: ConnectionTrait>(
    db: &C,
    hash: &str,
) -> Result<Option<api_key::Model>, StoreError> {
    Ok(ApiKeys::find()
        .filter(api_key::Column::Hash.eq(hash))
        .filter(api_key::Column::RevokedAt.is_null())
        .one(db)
        .await?)
}

/// Records that a key of `project_id` was used at `now`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn touch<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    ApiKeys::update_many()
        .col_expr(
            api_key::Column::LastUsedAt,
            sea_orm::sea_query::Expr::value(now),
        )
        .filter(api_key::Column::ProjectId.eq(project_id))
        .filter(api_key::Column::Id.eq(key_id))
        .exec(db)
        .await?;
    Ok(())
}
