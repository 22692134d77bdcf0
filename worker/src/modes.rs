//! Reading game modes from the store: the list the scheduler keeps a loop
//! for, and each mode's current config, refreshed by a cheap version check
//! at the start of every cycle (docs/game-modes.md, "Config changes").

use crate::error::WorkerError;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::entities::game_mode::{self, Entity as GameModes};
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::project_webhooks::{self, ModeTarget};
use matchplane_store::repos::{game_modes, StoreError};
use matchplane_webhook::EventType;
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QuerySelect,
};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Which config of a mode is meant: the mode's row (`gm_…`: a mode deleted
/// and created again under its name is another row, whose versions start
/// again at 1) and its version there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The `game_modes` row id.
    pub id: String,
    /// The config's version in that row.
    pub version: i64,
}

/// Every mode a worker should run a loop for: each mode of the database,
/// with its revision. (A deleted mode's searches are the sweep's,
/// [`crate::sweep`].)
///
/// # Errors
/// A database failure.
pub async fn list_all(db: &DatabaseConnection) -> Result<HashMap<ModeKey, Revision>, WorkerError> {
    let rows = listing(db, None).await?;
    Ok(rows.into_iter().map(|(k, v, _)| (k, v)).collect())
}

/// The modes changed (created or given a new version) at or after `since`,
/// each with its revision and `updated_at`.
///
/// # Errors
/// A database failure.
pub async fn list_changed(
    db: &DatabaseConnection,
    since: DateTime<Utc>,
) -> Result<Vec<(ModeKey, Revision, DateTime<Utc>)>, WorkerError> {
    listing(db, Some(since)).await
}

/// How many modes the database has: a deletion shows as a count below the
/// scheduler's.
///
/// # Errors
/// A database failure.
pub async fn count(db: &DatabaseConnection) -> Result<u64, WorkerError> {
    Ok(GameModes::find()
        .count(db)
        .await
        .map_err(StoreError::from)?)
}

async fn listing(
    db: &DatabaseConnection,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<(ModeKey, Revision, DateTime<Utc>)>, WorkerError> {
    let mut query = GameModes::find()
        .select_only()
        .column(game_mode::Column::ProjectId)
        .column(game_mode::Column::Name)
        .column(game_mode::Column::Id)
        .column(game_mode::Column::Version)
        .column(game_mode::Column::UpdatedAt);
    if let Some(since) = since {
        query = query.filter(game_mode::Column::UpdatedAt.gte(since));
    }
    let rows: Vec<(String, String, String, i64, DateTime<Utc>)> =
        query.into_tuple().all(db).await.map_err(StoreError::from)?;
    Ok(rows
        .into_iter()
        .map(|(project, name, id, version, at)| {
            (ModeKey::new(project, name), Revision { id, version }, at)
        })
        .collect())
}

/// The configs of `keys` (those the listing found at a new version), read
/// in one query of every mode when there are many (a worker's start), one
/// by one otherwise. A mode gone meanwhile, or whose config does not parse,
/// is left out (its loop reads it itself and logs why).
///
/// # Errors
/// A database failure.
pub async fn configs_of(
    db: &DatabaseConnection,
    keys: &[ModeKey],
) -> Result<HashMap<ModeKey, ModeConfig>, WorkerError> {
    let mut out = HashMap::with_capacity(keys.len());
    if keys.len() > 64 {
        let wanted: std::collections::HashSet<&ModeKey> = keys.iter().collect();
        for row in GameModes::find().all(db).await.map_err(StoreError::from)? {
            let key = ModeKey::new(row.project_id.clone(), row.name.clone());
            if wanted.contains(&key) {
                if let Ok(config) = parse(&row) {
                    out.insert(key, config);
                }
            }
        }
        return Ok(out);
    }
    for key in keys {
        match game_modes::get(db, &key.project_id, &key.mode).await {
            Ok(row) => {
                if let Ok(config) = parse(&row) {
                    out.insert(key.clone(), config);
                }
            }
            Err(StoreError::NotFound) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(out)
}

/// A mode's config as a cycle uses it.
#[derive(Debug, Clone)]
pub struct ModeConfig {
    /// The config (docs/game-modes.md).
    pub config: GameModeConfig,
    /// Its version.
    pub version: i64,
    /// Its `game_modes` row id (`gm_…`), under which its ratings and
    /// reported results are kept.
    pub id: String,
    /// When the mode was created: the stored matches of its name from
    /// before are a deleted mode's, not its own (docs/game-modes.md,
    /// "Changing a mode").
    pub created_at: DateTime<Utc>,
}

impl ModeConfig {
    /// Whether this is the config of `revision` (its row and version).
    pub fn is_at(&self, revision: &Revision) -> bool {
        self.version == revision.version && self.id == revision.id
    }

    /// Whether a `match.made` webhook is to be queued for this mode's matches.
    pub fn webhook_enabled(&self) -> bool {
        self.config.webhook.as_ref().is_some_and(|w| w.enabled)
    }
}

/// The current revision of `key`'s mode, `None` if it is deleted.
///
/// # Errors
/// A database failure.
pub async fn revision(
    db: &DatabaseConnection,
    key: &ModeKey,
) -> Result<Option<Revision>, WorkerError> {
    let row = GameModes::find()
        .select_only()
        .column(game_mode::Column::Id)
        .column(game_mode::Column::Version)
        .filter(game_mode::Column::ProjectId.eq(key.project_id.as_str()))
        .filter(game_mode::Column::Name.eq(key.mode.as_str()))
        .into_tuple::<(String, i64)>()
        .one(db)
        .await
        .map_err(StoreError::from)?;
    Ok(row.map(|(id, version)| Revision { id, version }))
}

/// Reads `key`'s config if `cached` is not of the current revision (a new
/// version, or a mode deleted and created again); `None` if the mode is
/// deleted.
///
/// # Errors
/// A database failure, or a stored config that does not parse.
pub async fn refresh(
    db: &DatabaseConnection,
    key: &ModeKey,
    cached: Option<ModeConfig>,
) -> Result<Option<ModeConfig>, WorkerError> {
    let Some(current) = revision(db, key).await? else {
        return Ok(None);
    };
    if let Some(cached) = cached.filter(|c| c.is_at(&current)) {
        return Ok(Some(cached));
    }
    match game_modes::get(db, &key.project_id, &key.mode).await {
        Ok(row) => parse(&row).map(Some),
        Err(StoreError::NotFound) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// The config of a stored mode row.
///
/// # Errors
/// [`WorkerError::Corrupt`] for a config that does not parse.
pub fn parse(row: &game_mode::Model) -> Result<ModeConfig, WorkerError> {
    let config: GameModeConfig = serde_json::from_value(row.config.clone())
        .map_err(|e| WorkerError::Corrupt(format!("game mode {}: {e}", row.name)))?;
    Ok(ModeConfig {
        config,
        version: row.version,
        id: row.id.clone(),
        created_at: row.created_at,
    })
}

/// The webhook URL and signing secrets of a mode at `now`: the current
/// secret, then every rotated-out one until its own grace period ends
/// (docs/webhook-events.md). For a mode with `webhook.useProjectEndpoint`,
/// the project endpoint's URL and secrets (docs/webhooks.md).
/// `None` if the mode is gone or has no enabled webhook.
///
/// # Errors
/// A database failure, or a stored config that does not parse.
pub async fn webhook_target(
    db: &DatabaseConnection,
    project_id: &str,
    mode: &str,
    now: DateTime<Utc>,
) -> Result<Option<(String, Vec<String>)>, WorkerError> {
    Ok(delivery_target(db, project_id, mode, now)
        .await?
        .map(|t| (t.target.url, t.target.secrets)))
}

/// Where a mode's webhooks go at `now` (its own URL, or the project's
/// endpoint with its event filter), with when the mode was created; `None`
/// if the mode is gone or has no enabled webhook, or its project endpoint
/// is absent or disabled.
///
/// # Errors
/// A database failure, or a stored config that does not parse.
pub async fn delivery_target(
    db: &DatabaseConnection,
    project_id: &str,
    mode: &str,
    now: DateTime<Utc>,
) -> Result<Option<ModeTarget>, WorkerError> {
    project_webhooks::target_of_mode(db, project_id, mode, now)
        .await
        .map_err(|err| match err {
            StoreError::Corrupt(why) => WorkerError::Corrupt(why),
            other => other.into(),
        })
}

/// How far back of the previous listing's start an incremental listing
/// reads: a change committed late, or stamped by an API host whose clock is
/// a little behind this worker's, still shows in the next listings. A quiet
/// table thus costs a listing of nothing, however many modes changed
/// earlier.
pub const LISTING_OVERLAP: Duration = Duration::from_secs(30);

/// A whole listing at least this often, whatever the incremental ones
/// found: the backstop for a change stamped further back than
/// [`LISTING_OVERLAP`].
pub const FULL_LISTING_EVERY: Duration = Duration::from_secs(60);

/// The scheduler's view of the modes table, kept by incremental listings:
/// each pass reads only the modes changed since its cursor (with
/// [`LISTING_OVERLAP`]) and the table's count; a count that disagrees (a
/// deletion), or [`FULL_LISTING_EVERY`], lists the whole table again.
#[derive(Debug, Default)]
pub struct Catalogue {
    modes: HashMap<ModeKey, Revision>,
    /// When the last successful listing started (this worker's clock).
    cursor: Option<DateTime<Utc>>,
    full_at: Option<Instant>,
}

/// What one [`Catalogue::refresh`] found.
#[derive(Debug, Default)]
pub struct Changes {
    /// Modes new to the catalogue or at a new revision (a new version, or
    /// deleted and created again), with the revision.
    pub changed: Vec<(ModeKey, Revision)>,
    /// Modes no longer in the table.
    pub gone: Vec<ModeKey>,
    /// Whether the whole table was read.
    pub full: bool,
}

impl Catalogue {
    /// The modes listed, with their revisions.
    pub fn modes(&self) -> &HashMap<ModeKey, Revision> {
        &self.modes
    }

    /// The listed revision of `key`.
    pub fn revision(&self, key: &ModeKey) -> Option<&Revision> {
        self.modes.get(key)
    }

    /// Brings the catalogue up to date with the table and says what
    /// changed.
    ///
    /// # Errors
    /// A database failure; the catalogue is then as before.
    pub async fn refresh(&mut self, db: &DatabaseConnection) -> Result<Changes, WorkerError> {
        let due = self
            .full_at
            .is_none_or(|at| at.elapsed() >= FULL_LISTING_EVERY);
        if !due {
            let since = self.cursor.map_or(DateTime::<Utc>::UNIX_EPOCH, |c| {
                c - chrono::Duration::from_std(LISTING_OVERLAP).unwrap_or_default()
            });
            let started = Utc::now();
            let rows = list_changed(db, since).await?;
            let total = count(db).await?;
            let new = rows
                .iter()
                .filter(|(k, _, _)| !self.modes.contains_key(k))
                .count();
            // A count other than the catalogue's plus the new modes: some
            // were deleted (or created past the overlap): list them all.
            if total == (self.modes.len() + new) as u64 {
                let mut changes = Changes::default();
                self.cursor = Some(started);
                for (key, revision, _) in rows {
                    if self.modes.get(&key) != Some(&revision) {
                        self.modes.insert(key.clone(), revision.clone());
                        changes.changed.push((key, revision));
                    }
                }
                return Ok(changes);
            }
        }
        let started = Utc::now();
        let listed = list_all(db).await?;
        let mut changes = Changes {
            full: true,
            ..Changes::default()
        };
        changes.gone = self
            .modes
            .keys()
            .filter(|k| !listed.contains_key(*k))
            .cloned()
            .collect();
        changes.changed = listed
            .iter()
            .filter(|(k, v)| self.modes.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        self.modes = listed;
        self.cursor = Some(started);
        self.full_at = Some(Instant::now());
        Ok(changes)
    }
}

/// Whether an event of type `event` of `mode` is to be queued: `Some` of
/// the mode's creation when it is, for the events of the matches made
/// since ([`matchplane_store::repos::matches::is_own_mode`]).
///
/// Not when the mode is gone: a match claimed just before its mode was
/// deleted (a proposal everyone accepted, a cycle's last claim) is stored
/// as made, but the deleted mode has no endpoint: the recorder queues no
/// webhook for it, and that is logged here (docs/webhooks.md, 'A deleted
/// mode'); nor for such a match once a mode of the same name was created
/// again, which is a new mode. Not either, for a mode on the project's
/// endpoint, when the endpoint is absent, disabled or does not send
/// `event` (its `eventTypes`, docs/webhooks.md). A failed read counts as
/// yes, for every match: the delivery then says.
pub(crate) async fn queues(
    db: &DatabaseConnection,
    mode: &ModeKey,
    event: EventType,
) -> Option<DateTime<Utc>> {
    let row = match game_modes::get(db, &mode.project_id, &mode.mode).await {
        Ok(row) => row,
        Err(StoreError::NotFound) => {
            tracing::info!(project_id = %mode.project_id, game_mode = %mode.mode,
                "the game mode was deleted: its last matches are stored without a webhook");
            return None;
        }
        Err(_) => return Some(DateTime::<Utc>::MIN_UTC),
    };
    let since = Some(row.created_at);
    let uses_project = parse(&row)
        .ok()
        .and_then(|c| c.config.webhook)
        .is_some_and(|w| w.use_project_endpoint);
    if !uses_project {
        return since;
    }
    match project_webhooks::target_of(db, &row, Utc::now()).await {
        Ok(Some(target)) => since.filter(|_| target.sends(event.as_str())),
        Ok(None) => None,
        Err(_) => since,
    }
}
