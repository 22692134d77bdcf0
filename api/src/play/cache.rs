//! Mode configs and project quotas for the hot path, cached for
//! [`CONFIG_CACHE_TTL`] so ticket generation and search start query no
//! database. A change made through this process evicts at once
//! ([`ConfigWrite`] watches every successful write under a
//! project or a tier); another replica's change is seen within the TTL.

use crate::problem::ApiError;
use crate::state::AppState;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::repos::{game_modes, projects, tiers, StoreError};
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a cached config or quota is used without asking the database.
pub const CONFIG_CACHE_TTL: Duration = Duration::from_secs(1);

type ModeEntry = (Option<Arc<GameModeConfig>>, Instant);

/// Cached mode configs (`None`: no such mode) and project quotas.
#[derive(Default)]
pub struct ConfigCache {
    /// By project, then by mode name: a hit is looked up by `&str`, with no
    /// allocation (ticket generation and search start are hot paths).
    modes: Mutex<HashMap<String, HashMap<String, ModeEntry>>>,
    quotas: Mutex<HashMap<String, (u64, Instant)>>,
}

impl ConfigCache {
    /// `project_id`'s mode `name`, `None` if it does not exist.
    ///
    /// # Errors
    /// `500` on a database failure or a stored config that does not parse.
    pub async fn mode(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
        name: &str,
    ) -> Result<Option<Arc<GameModeConfig>>, ApiError> {
        if let Some((config, at)) = self
            .modes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(project_id)
            .and_then(|modes| modes.get(name))
        {
            if at.elapsed() < CONFIG_CACHE_TTL {
                return Ok(config.clone());
            }
        }
        // Taken before the query: a change committed while it runs is seen
        // within CONFIG_CACHE_TTL of the change.
        let fetched = Instant::now();
        let config = match game_modes::get(db, project_id, name).await {
            Ok(model) => Some(Arc::new(
                serde_json::from_value::<GameModeConfig>(model.config)
                    .map_err(|e| ApiError::internal(&e))?,
            )),
            Err(StoreError::NotFound) => None,
            Err(other) => return Err(other.into()),
        };
        self.modes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(project_id.to_owned())
            .or_default()
            .insert(name.to_owned(), (config.clone(), fetched));
        Ok(config)
    }

    /// Whether `project_id`'s mode `name` was looked up and found, however
    /// long ago (never asks the database). A search start looks the config
    /// up before the token is checked only for such a mode, so a flood of
    /// made-up tokens neither queries the database nor grows this cache.
    pub fn knows_mode(&self, project_id: &str, name: &str) -> bool {
        self.modes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(project_id)
            .and_then(|modes| modes.get(name))
            .is_some_and(|(config, _)| config.is_some())
    }

    /// `project_id`'s tier `maxConcurrentSearches`.
    ///
    /// # Errors
    /// `404` for an unknown project, `500` on a database failure.
    pub async fn max_live(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
    ) -> Result<u64, ApiError> {
        if let Some((max, at)) = self
            .quotas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(project_id)
        {
            if at.elapsed() < CONFIG_CACHE_TTL {
                return Ok(*max);
            }
        }
        let fetched = Instant::now();
        let project = projects::get(db, project_id).await?;
        let max = tiers::get(db, &project.tier)
            .await?
            .to_tier()
            .max_concurrent_searches;
        self.quotas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(project_id.to_owned(), (max, fetched));
        Ok(max)
    }

    /// Forgets everything cached of a project.
    pub fn evict_project(&self, project_id: &str) {
        self.modes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(project_id);
        self.quotas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(project_id);
    }

    /// Forgets everything (a tier changed).
    pub fn evict_all(&self) {
        self.modes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.quotas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// A request that may change cached configs: a successful write under
/// `/v1/projects/{projectId}` (a mode created, replaced or deleted, a
/// project's tier changed) makes this process forget that project's cached
/// configs; one under `/v1/tiers`, all of them. Ticket and search writes
/// change no config and are not one. Read before the handler runs, applied
/// after it answered (see `crate::edge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigWrite {
    /// A tier write: forget everything.
    Tiers,
    /// A write under this project.
    Project(String),
}

impl ConfigWrite {
    /// What `req` may change, if anything.
    pub fn of(req: &Request) -> Option<Self> {
        if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
            return None;
        }
        let path = req.uri().path();
        if path.starts_with("/v1/tiers") {
            return Some(Self::Tiers);
        }
        let rest = path.strip_prefix("/v1/projects/")?;
        let mut parts = rest.split('/');
        let project_id = parts.next().unwrap_or_default();
        let hot = matches!(parts.next(), Some("tickets" | "players"));
        (!hot && !project_id.is_empty()).then(|| Self::Project(project_id.to_owned()))
    }

    /// Forgets what the write changed, if it succeeded.
    pub fn apply(self, state: &AppState, response: &Response) {
        if !response.status().is_success() {
            return;
        }
        match self {
            Self::Tiers => state.play.cache.evict_all(),
            Self::Project(project_id) => state.play.cache.evict_project(&project_id),
        }
    }
}
