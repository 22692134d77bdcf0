//! A project's one webhook endpoint (docs/webhooks.md, "One endpoint for
//! every mode of a project"), and where a mode's webhook goes: its own URL
//! signed with its own secret, or, with `webhook.useProjectEndpoint`, the
//! project's endpoint signed with the project's secret ([`target_of`]).
//!
//! The endpoint rotates its secret exactly as a mode does
//! ([`crate::repos::webhook_secrets`]); its delivery health is kept in
//! `webhook_health` under [`HEALTH_KEY`], beside the modes' own rows.

use crate::entities::game_mode;
use crate::entities::project_webhook::{self, Entity as ProjectWebhooks};
use crate::repos::{game_modes, webhook_secrets, StoreError};
use chrono::{DateTime, Utc};
use matchplane_matchmaker::GameModeConfig;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, QueryFilter,
    Select, Set,
};
use serde_json::Value;

/// The `game_mode` key of the project endpoint's row in `webhook_health`:
/// no mode can have it (a mode's name matches `^[a-z0-9][a-z0-9_-]{0,62}$`).
pub const HEALTH_KEY: &str = "*";

/// The one way into a project's endpoint row.
fn scoped(project_id: &str) -> Select<ProjectWebhooks> {
    ProjectWebhooks::find().filter(project_webhook::Column::ProjectId.eq(project_id))
}

/// What to set with [`put`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Destination URL, already checked.
    pub url: String,
    /// Whether events are sent.
    pub enabled: bool,
    /// The event type names sent; `None` for every type.
    pub event_types: Option<Vec<String>>,
}

/// The event type names `row` sends; `None` for every type.
pub fn event_types(row: &project_webhook::Model) -> Option<Vec<String>> {
    row.event_types
        .as_ref()
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// The project's endpoint.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has none.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
) -> Result<project_webhook::Model, StoreError> {
    scoped(project_id)
        .one(db)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Sets the project's endpoint: creates it with `new_secret` when it has
/// none (`true` in the answer), or changes its URL, `enabled` and event
/// types, keeping its secrets.
///
/// # Errors
/// [`StoreError::Db`] on a database failure; [`StoreError::Conflict`] when
/// a concurrent create got there first and then vanished.
pub async fn put<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    endpoint: Endpoint,
    new_secret: &str,
    now: DateTime<Utc>,
) -> Result<(project_webhook::Model, bool), StoreError> {
    let types = endpoint
        .event_types
        .as_ref()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null));
    let found = match get(db, project_id).await {
        Ok(current) => Some(current),
        Err(StoreError::NotFound) => None,
        Err(err) => return Err(err),
    };
    if let Some(current) = found {
        let mut active = current.into_active_model();
        active.url = Set(endpoint.url);
        active.enabled = Set(endpoint.enabled);
        active.event_types = Set(types);
        active.updated_at = Set(now);
        return Ok((active.update(db).await?, false));
    }
    let row = project_webhook::ActiveModel {
        project_id: Set(project_id.to_owned()),
        url: Set(endpoint.url.clone()),
        enabled: Set(endpoint.enabled),
        event_types: Set(types),
        webhook_secret: Set(new_secret.to_owned()),
        previous_webhook_secret: Set(None),
        previous_secret_expires_at: Set(None),
        older_webhook_secrets: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    };
    match row.insert(db).await {
        Ok(created) => Ok((created, true)),
        // Created concurrently: change that one instead.
        Err(err)
            if matches!(
                err.sql_err(),
                Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
            ) =>
        {
            let current = get(db, project_id).await?;
            let mut active = current.into_active_model();
            active.url = Set(endpoint.url);
            active.enabled = Set(endpoint.enabled);
            active.event_types = Set(endpoint
                .event_types
                .map(|t| serde_json::to_value(t).unwrap_or(Value::Null)));
            active.updated_at = Set(now);
            Ok((active.update(db).await?, false))
        }
        Err(err) => Err(err.into()),
    }
}

/// Rotates the endpoint's secret as a mode's rotates
/// ([`game_modes::rotate_secret`]): the replaced one keeps signing for 24
/// hours, older ones for the rest of their own.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no endpoint;
/// [`StoreError::Conflict`] when a concurrent rotation got there first.
pub async fn rotate_secret<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    new_secret: &str,
    now: DateTime<Utc>,
) -> Result<project_webhook::Model, StoreError> {
    let current = get(db, project_id).await?;
    let expires = now + webhook_secrets::GRACE;
    let older = webhook_secrets::older_after_rotation(&current, now);
    let result = ProjectWebhooks::update_many()
        .col_expr(project_webhook::Column::WebhookSecret, new_secret.into())
        .col_expr(
            project_webhook::Column::PreviousWebhookSecret,
            Some(current.webhook_secret.clone()).into(),
        )
        .col_expr(
            project_webhook::Column::PreviousSecretExpiresAt,
            Some(expires).into(),
        )
        .col_expr(
            project_webhook::Column::OlderWebhookSecrets,
            Some(older.clone()).into(),
        )
        .col_expr(project_webhook::Column::UpdatedAt, now.into())
        .filter(project_webhook::Column::ProjectId.eq(project_id))
        .filter(project_webhook::Column::WebhookSecret.eq(current.webhook_secret.clone()))
        .exec(db)
        .await?;
    if result.rows_affected != 1 {
        return Err(StoreError::Conflict);
    }
    Ok(project_webhook::Model {
        previous_webhook_secret: Some(current.webhook_secret.clone()),
        previous_secret_expires_at: Some(expires),
        older_webhook_secrets: Some(older),
        webhook_secret: new_secret.to_owned(),
        updated_at: now,
        ..current
    })
}

/// Deletes the project's endpoint and its delivery health. Modes that use
/// it queue no webhook until one is set again.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has none.
pub async fn delete<C: ConnectionTrait>(db: &C, project_id: &str) -> Result<(), StoreError> {
    let result = ProjectWebhooks::delete_many()
        .filter(project_webhook::Column::ProjectId.eq(project_id))
        .exec(db)
        .await?;
    if result.rows_affected == 0 {
        return Err(StoreError::NotFound);
    }
    crate::repos::webhook_health::forget(db, project_id, HEALTH_KEY).await
}

/// Where a mode's webhooks go at a moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL (checked again at every delivery).
    pub url: String,
    /// The secrets that sign: the current one first, then every
    /// rotated-out one still in its 24 hours, newest first.
    pub secrets: Vec<String>,
    /// Whether this is the project's endpoint (its health is kept under
    /// [`HEALTH_KEY`] too).
    pub project_endpoint: bool,
    /// The event type names sent; `None` for every type (a mode's own URL
    /// gets every type).
    pub event_types: Option<Vec<String>>,
}

impl Target {
    /// Whether an event of type `name` is sent here.
    pub fn sends(&self, name: &str) -> bool {
        self.event_types
            .as_ref()
            .is_none_or(|types| types.iter().any(|t| t == name))
    }
}

/// Where the webhooks of the stored mode `mode` go at `now`: its own URL
/// and secrets, or the project's endpoint for a mode with
/// `webhook.useProjectEndpoint`. `None` when the mode has no enabled
/// webhook, or uses the project's endpoint and the project has none or has
/// it disabled.
///
/// # Errors
/// [`StoreError::Corrupt`] for a stored config that does not parse; a
/// database failure.
pub async fn target_of<C: ConnectionTrait>(
    db: &C,
    mode: &game_mode::Model,
    now: DateTime<Utc>,
) -> Result<Option<Target>, StoreError> {
    let config: GameModeConfig = serde_json::from_value(mode.config.clone())
        .map_err(|e| StoreError::Corrupt(format!("game mode {}: {e}", mode.name)))?;
    let Some(webhook) = config.webhook.filter(|w| w.enabled) else {
        return Ok(None);
    };
    if !webhook.use_project_endpoint {
        return Ok(webhook.url.map(|url| Target {
            url,
            secrets: webhook_secrets::signing_at(mode, now),
            project_endpoint: false,
            event_types: None,
        }));
    }
    match get(db, &mode.project_id).await {
        Ok(endpoint) if endpoint.enabled => Ok(Some(Target {
            secrets: webhook_secrets::signing_at(&endpoint, now),
            event_types: event_types(&endpoint),
            url: endpoint.url,
            project_endpoint: true,
        })),
        Ok(_) | Err(StoreError::NotFound) => Ok(None),
        Err(err) => Err(err),
    }
}

/// Where the webhooks of a mode go, and which mode of its name that is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeTarget {
    /// The target.
    pub target: Target,
    /// When the mode was created: an event of a deleted mode of the same
    /// name, from before it, is not its to send
    /// ([`crate::repos::matches::is_own_mode`]).
    pub mode_created_at: DateTime<Utc>,
}

/// [`target_of`] the mode `name` of `project_id`, with when the mode was
/// created; `None` also when the mode is gone.
///
/// # Errors
/// As [`target_of`].
pub async fn target_of_mode<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Option<ModeTarget>, StoreError> {
    match game_modes::get(db, project_id, name).await {
        Ok(mode) => Ok(target_of(db, &mode, now).await?.map(|target| ModeTarget {
            target,
            mode_created_at: mode.created_at,
        })),
        Err(StoreError::NotFound) => Ok(None),
        Err(err) => Err(err),
    }
}
