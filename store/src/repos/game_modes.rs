//! Game modes (docs/game-modes.md): current config, `version` +1 per change, and a
//! history row for every version ever committed.

use crate::entities::game_mode::{self, Entity as GameModes};
use crate::entities::game_mode_version::{self, Entity as GameModeVersions};
use crate::repos::{holds_nul, webhook_secrets, StoreError};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Select, Set, TransactionTrait,
};
use serde_json::Value;
use std::collections::HashSet;

/// How long a rotated-out webhook secret keeps signing (docs/webhook-events.md: 24 hours).
pub const PREVIOUS_SECRET_GRACE: Duration = webhook_secrets::GRACE;

/// The one way into a project's game modes.
pub fn scoped(project_id: &str) -> Select<GameModes> {
    GameModes::find().filter(game_mode::Column::ProjectId.eq(project_id))
}

fn by_name(project_id: &str, name: &str) -> Select<GameModes> {
    scoped(project_id).filter(game_mode::Column::Name.eq(name))
}

/// Mode `name` of `project_id`, if any (none for a name holding a NUL,
/// [`holds_nul`]).
async fn find<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
) -> Result<Option<game_mode::Model>, StoreError> {
    if holds_nul(name) {
        return Ok(None);
    }
    Ok(by_name(project_id, name).one(db).await?)
}

fn history_row(mode: &game_mode::Model) -> game_mode_version::ActiveModel {
    game_mode_version::ActiveModel {
        game_mode_id: Set(mode.id.clone()),
        version: Set(mode.version),
        project_id: Set(mode.project_id.clone()),
        name: Set(mode.name.clone()),
        config: Set(mode.config.clone()),
        created_at: Set(mode.updated_at),
    }
}

/// How many game modes `project_id` has (for the `maxGameModes` quota).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn count<C: ConnectionTrait>(db: &C, project_id: &str) -> Result<u64, StoreError> {
    Ok(scoped(project_id).count(db).await?)
}

/// A project's game modes, by name.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn list<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
) -> Result<Vec<game_mode::Model>, StoreError> {
    Ok(scoped(project_id)
        .order_by_asc(game_mode::Column::Name)
        .all(db)
        .await?)
}

/// The `(projectId, name)` of every game mode of the projects listed: for
/// the worker's sweep, which fails the searches of a pool whose mode is
/// gone. A project the database does not have (deleted) has none.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn names_in<C: ConnectionTrait>(
    db: &C,
    project_ids: &[String],
) -> Result<HashSet<(String, String)>, StoreError> {
    let mut names = HashSet::new();
    // A few hundred bound parameters per query suits every backend.
    for chunk in project_ids.chunks(500) {
        let rows: Vec<(String, String)> = GameModes::find()
            .select_only()
            .column(game_mode::Column::ProjectId)
            .column(game_mode::Column::Name)
            .filter(game_mode::Column::ProjectId.is_in(chunk.iter().map(String::as_str)))
            .into_tuple()
            .all(db)
            .await?;
        names.extend(rows);
    }
    Ok(names)
}

/// One game mode of `project_id` by name.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
) -> Result<game_mode::Model, StoreError> {
    find(db, project_id, name)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Creates version 1 of a mode named `name` with `config` and `webhook_secret`.
///
/// # Errors
/// [`StoreError::Conflict`] when the name is taken in the project.
pub async fn create<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    config: Value,
    webhook_secret: &str,
    now: DateTime<Utc>,
) -> Result<game_mode::Model, StoreError> {
    let new = NewMode {
        name,
        config,
        webhook_secret,
    };
    match create_within(db, project_id, new, u64::MAX, now).await? {
        Created::Created(mode) => Ok(*mode),
        Created::Full { .. } => Err(StoreError::Conflict),
    }
}

/// A mode to create: its name, config and webhook secret.
#[derive(Debug)]
pub struct NewMode<'a> {
    /// The mode's name.
    pub name: &'a str,
    /// Its config, as stored.
    pub config: Value,
    /// Its `whsec_…` secret.
    pub webhook_secret: &'a str,
}

/// What [`create_within`] came to.
#[derive(Debug)]
pub enum Created {
    /// Created, version 1.
    Created(Box<game_mode::Model>),
    /// Nothing created: the project already has `count` modes, its
    /// quota's worth or more.
    Full {
        /// The project's modes.
        count: u64,
    },
}

/// [`create`] only while the project has fewer than `max_modes` modes
/// (its tier's `maxGameModes`, docs/project-settings.md), counted in the
/// same transaction as the insert with the project's row held: creates of
/// one project made at once are counted one after another, so together
/// they never pass the quota.
///
/// # Errors
/// [`StoreError::Conflict`] when the name is taken in the project.
pub async fn create_within<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    new: NewMode<'_>,
    max_modes: u64,
    now: DateTime<Utc>,
) -> Result<Created, StoreError> {
    let txn = db.begin().await?;
    if max_modes < u64::MAX {
        // A write to the project's row first: PostgreSQL holds the row,
        // SQLite its write lock, until this transaction ends, so a
        // concurrent create of the project waits here and then counts
        // this one's mode.
        use crate::entities::project;
        project::Entity::update_many()
            .col_expr(
                project::Column::UpdatedAt,
                sea_orm::sea_query::Expr::col(project::Column::UpdatedAt).into(),
            )
            .filter(project::Column::Id.eq(project_id))
            .exec(&txn)
            .await?;
        let count = scoped(project_id).count(&txn).await?;
        if count >= max_modes {
            return Ok(Created::Full { count });
        }
    }
    if by_name(project_id, new.name).one(&txn).await?.is_some() {
        return Err(StoreError::Conflict);
    }
    let mode = game_mode::ActiveModel {
        id: Set(format!("gm_{}", ulid::Ulid::new())),
        project_id: Set(project_id.to_owned()),
        name: Set(new.name.to_owned()),
        config: Set(new.config),
        version: Set(1),
        webhook_secret: Set(new.webhook_secret.to_owned()),
        previous_webhook_secret: Set(None),
        previous_secret_expires_at: Set(None),
        older_webhook_secrets: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        held_at: Set(None),
        held_by: Set(None),
    }
    .insert(&txn)
    .await?;
    history_row(&mode).insert(&txn).await?;
    txn.commit().await?;
    Ok(Created::Created(Box::new(mode)))
}

/// Replaces the config of mode `name`, bumping its version and keeping the
/// new version in the history. Only commits if nobody changed the mode
/// meanwhile (compare-and-set on `version`).
///
/// # Errors
/// [`StoreError::NotFound`], or [`StoreError::Conflict`] on a concurrent change.
pub async fn replace<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    config: Value,
    now: DateTime<Utc>,
) -> Result<game_mode::Model, StoreError> {
    replace_at(db, project_id, name, config, None, None, now).await
}

/// [`replace`], only if the mode is still at version `expected` (when
/// given): the version a client read (`If-Match`) or a handler checked.
/// With `new_secret` the mode's webhook secret becomes that one and every
/// secret it had stops signing at once, rotated-out ones too: for a mode
/// given a webhook when it had none, whose removed webhook's secrets must
/// not come back.
///
/// # Errors
/// [`StoreError::NotFound`], or [`StoreError::Conflict`] when the mode is
/// at another version (or changes concurrently).
pub async fn replace_at<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    config: Value,
    expected: Option<i64>,
    new_secret: Option<&str>,
    now: DateTime<Utc>,
) -> Result<game_mode::Model, StoreError> {
    let txn = db.begin().await?;
    let mut current = find(&txn, project_id, name)
        .await?
        .ok_or(StoreError::NotFound)?;
    if expected.is_some_and(|v| v != current.version) {
        return Err(StoreError::Conflict);
    }
    let mut update = GameModes::update_many();
    if let Some(secret) = new_secret {
        current.webhook_secret = secret.to_owned();
        current.previous_webhook_secret = None;
        current.previous_secret_expires_at = None;
        current.older_webhook_secrets = None;
        update = update
            .col_expr(game_mode::Column::WebhookSecret, secret.into())
            .col_expr(
                game_mode::Column::PreviousWebhookSecret,
                Option::<String>::None.into(),
            )
            .col_expr(
                game_mode::Column::PreviousSecretExpiresAt,
                Option::<DateTime<Utc>>::None.into(),
            )
            .col_expr(
                game_mode::Column::OlderWebhookSecrets,
                Option::<Value>::None.into(),
            );
    }
    let result = update
        .col_expr(game_mode::Column::Config, config.clone().into())
        .col_expr(game_mode::Column::Version, (current.version + 1).into())
        .col_expr(game_mode::Column::UpdatedAt, now.into())
        .filter(game_mode::Column::ProjectId.eq(project_id))
        .filter(game_mode::Column::Id.eq(current.id.clone()))
        .filter(game_mode::Column::Version.eq(current.version))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        return Err(StoreError::Conflict);
    }
    let updated = game_mode::Model {
        config,
        version: current.version + 1,
        updated_at: now,
        ..current
    };
    history_row(&updated).insert(&txn).await?;
    txn.commit().await?;
    Ok(updated)
}

/// Rotates the webhook secret of mode `name`: the replaced one keeps signing
/// for [`PREVIOUS_SECRET_GRACE`], and every secret rotated out before it
/// keeps the rest of its own grace period (see [`webhook_secrets`]). The
/// config is unchanged, so the version is too.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode;
/// [`StoreError::Conflict`] when a concurrent rotation got there first.
pub async fn rotate_secret<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    new_secret: &str,
    now: DateTime<Utc>,
) -> Result<game_mode::Model, StoreError> {
    let current = get(db, project_id, name).await?;
    let expires = now + PREVIOUS_SECRET_GRACE;
    let older = webhook_secrets::older_after_rotation(&current, now);
    let result = GameModes::update_many()
        .col_expr(game_mode::Column::WebhookSecret, new_secret.into())
        .col_expr(
            game_mode::Column::PreviousWebhookSecret,
            Some(current.webhook_secret.clone()).into(),
        )
        .col_expr(
            game_mode::Column::PreviousSecretExpiresAt,
            Some(expires).into(),
        )
        .col_expr(
            game_mode::Column::OlderWebhookSecrets,
            Some(older.clone()).into(),
        )
        .col_expr(game_mode::Column::UpdatedAt, now.into())
        .filter(game_mode::Column::ProjectId.eq(project_id))
        .filter(game_mode::Column::Id.eq(current.id.clone()))
        .filter(game_mode::Column::WebhookSecret.eq(current.webhook_secret.clone()))
        .exec(db)
        .await?;
    if result.rows_affected != 1 {
        return Err(StoreError::Conflict);
    }
    Ok(game_mode::Model {
        previous_webhook_secret: Some(current.webhook_secret.clone()),
        previous_secret_expires_at: Some(expires),
        older_webhook_secrets: Some(older),
        webhook_secret: new_secret.to_owned(),
        updated_at: now,
        ..current
    })
}

/// Deletes mode `name` of `project_id` with its history: its versions,
/// its webhook's health, its figures (the last cycle's, the minutes) and
/// its recorded searches.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode.
pub async fn delete<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
) -> Result<(), StoreError> {
    delete_at(db, project_id, name, None).await
}

/// [`delete`], only while the mode is at `version` when one is given (an
/// `If-Match` checked in the same transaction as the delete).
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode;
/// [`StoreError::Conflict`] when it is at another version.
pub async fn delete_at<C: TransactionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    version: Option<i64>,
) -> Result<(), StoreError> {
    let txn = db.begin().await?;
    let current = find(&txn, project_id, name)
        .await?
        .ok_or(StoreError::NotFound)?;
    if version.is_some_and(|v| v != current.version) {
        return Err(StoreError::Conflict);
    }
    GameModeVersions::delete_many()
        .filter(game_mode_version::Column::ProjectId.eq(project_id))
        .filter(game_mode_version::Column::GameModeId.eq(current.id.clone()))
        .exec(&txn)
        .await?;
    GameModes::delete_many()
        .filter(game_mode::Column::ProjectId.eq(project_id))
        .filter(game_mode::Column::Id.eq(current.id))
        .exec(&txn)
        .await?;
    // Its figures go with it: a mode created again under the name is a
    // new mode (docs/game-modes.md, on a deleted mode).
    crate::repos::webhook_health::forget(&txn, project_id, name).await?;
    crate::repos::cycle_stats::forget(&txn, project_id, name).await?;
    crate::repos::stats_history::forget(&txn, project_id, name).await?;
    // So is its recording: the new mode neither serves nor replays it.
    crate::repos::recordings::forget(&txn, project_id, name).await?;
    txn.commit().await?;
    Ok(())
}

/// Every version of mode `name`, oldest first.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such mode.
pub async fn versions<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
) -> Result<Vec<game_mode_version::Model>, StoreError> {
    let current = get(db, project_id, name).await?;
    Ok(GameModeVersions::find()
        .filter(game_mode_version::Column::ProjectId.eq(project_id))
        .filter(game_mode_version::Column::GameModeId.eq(current.id))
        .order_by_asc(game_mode_version::Column::Version)
        .all(db)
        .await?)
}
