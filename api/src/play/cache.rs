//! Mode configs and project quotas for the hot path, in two
//! [`TtlCache`]s, so ticket generation and search start query no database
//! while an entry is fresh. The handlers that write modes, projects and
//! tiers make them stale ([`ConfigCache::modes_written`],
//! [`ConfigCache::quotas_written`]); another instance's change is seen
//! within [`crate::cache::CACHE_TTL`].

use crate::cache::{CacheKey, Outage, TtlCache};
use crate::problem::ApiError;
use matchplane_matchmaker::validation::is_valid_name;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::pool::PlayerSearchScope;
use matchplane_store::repos::{game_modes, projects, tiers, StoreError};
use moka::Equivalent;
use sea_orm::DatabaseConnection;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Most cached modes, and most cached project quotas.
const CAPACITY: u64 = 10_000;

/// A project's tier limits and settings the hot path needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// `maxConcurrentSearches`.
    pub max_live: u64,
    /// `maxPendingTickets`.
    pub max_pending: u64,
    /// The project's `playerSearchScope` (docs/acceptance.md).
    pub scope: PlayerSearchScope,
}

/// A mode as looked up: borrowed, so a hit allocates nothing. Hashes as
/// the stored `(project, mode)` pair does.
struct ModeRef<'a>(&'a str, &'a str);

impl Hash for ModeRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.0, self.1).hash(state);
    }
}

impl Equivalent<(String, String)> for ModeRef<'_> {
    fn equivalent(&self, key: &(String, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

impl CacheKey<(String, String)> for ModeRef<'_> {
    fn to_key(&self) -> (String, String) {
        (self.0.to_owned(), self.1.to_owned())
    }
}

/// Cached mode configs (`None`: no such mode) and project quotas.
#[derive(Debug)]
pub struct ConfigCache {
    modes: TtlCache<(String, String), Option<Arc<GameModeConfig>>>,
    quotas: TtlCache<String, Quotas>,
    /// Whether the database was just found out of reach: shared with the
    /// key cache, so a request through an outage pays at most one failed
    /// load.
    pub outage: Outage,
}

impl Default for ConfigCache {
    fn default() -> Self {
        Self {
            modes: TtlCache::new(CAPACITY),
            quotas: TtlCache::new(CAPACITY),
            outage: Outage::default(),
        }
    }
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
        // No mode has such a name (docs/game-modes.md): answered without the database
        // or a cache entry, so made-up names cannot fill the cache.
        if !is_valid_name(name) {
            return Ok(None);
        }
        self.modes
            .get(&ModeRef(project_id, name), &self.outage, || {
                fetch_mode(db, project_id, name)
            })
            .await
    }

    /// Whether `project_id`'s mode `name` was looked up and found, however
    /// long ago (never asks the database). A search start looks the config
    /// up before the token is checked only for such a mode, so a flood of
    /// made-up tokens neither queries the database nor grows this cache.
    pub async fn knows_mode(&self, project_id: &str, name: &str) -> bool {
        self.modes
            .peek(&ModeRef(project_id, name))
            .await
            .is_some_and(|config| config.is_some())
    }

    /// The config of `project_id`'s mode `name` as last loaded, however
    /// long ago, or `None` (never asks the database): what the recording
    /// hooks read, the mode being loaded by the start they follow.
    pub async fn peek_mode(&self, project_id: &str, name: &str) -> Option<Arc<GameModeConfig>> {
        self.modes.peek(&ModeRef(project_id, name)).await.flatten()
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
        Ok(self.quotas(db, project_id).await?.max_live)
    }

    /// `project_id`'s tier `maxPendingTickets`.
    ///
    /// # Errors
    /// `404` for an unknown project, `500` on a database failure.
    pub async fn max_pending(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
    ) -> Result<u64, ApiError> {
        Ok(self.quotas(db, project_id).await?.max_pending)
    }

    /// `project_id`'s `playerSearchScope` (a project setting, cached with
    /// its quotas).
    ///
    /// # Errors
    /// `404` for an unknown project, `500` on a database failure.
    pub async fn scope(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
    ) -> Result<PlayerSearchScope, ApiError> {
        Ok(self.quotas(db, project_id).await?.scope)
    }

    /// `project_id`'s tier limits and settings.
    ///
    /// # Errors
    /// `404` for an unknown project, `500` on a database failure.
    pub async fn quotas(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
    ) -> Result<Quotas, ApiError> {
        self.quotas
            .get(project_id, &self.outage, || fetch_quotas(db, project_id))
            .await
    }

    /// A mode was created, replaced or deleted, or a project deleted,
    /// through this instance (the write committed): every cached config is
    /// stale.
    pub fn modes_written(&self) {
        self.modes.invalidate_all();
    }

    /// A project's tier changed, a tier was written or a project deleted
    /// through this instance: every cached quota is stale.
    pub fn quotas_written(&self) {
        self.quotas.invalidate_all();
    }
}

/// `project_id`'s mode `name` from the database, `None` if absent.
async fn fetch_mode(
    db: &DatabaseConnection,
    project_id: &str,
    name: &str,
) -> Result<Option<Arc<GameModeConfig>>, ApiError> {
    match game_modes::get(db, project_id, name).await {
        Ok(model) => Ok(Some(Arc::new(
            serde_json::from_value::<GameModeConfig>(model.config)
                .map_err(|e| ApiError::internal(&e))?,
        ))),
        Err(StoreError::NotFound) => Ok(None),
        Err(other) => Err(other.into()),
    }
}

/// `project_id`'s tier limits from the database.
async fn fetch_quotas(db: &DatabaseConnection, project_id: &str) -> Result<Quotas, ApiError> {
    let project = projects::get(db, project_id).await?;
    let tier = tiers::get(db, &project.tier).await?.to_tier();
    Ok(Quotas {
        max_live: tier.max_concurrent_searches,
        max_pending: tier.max_pending_tickets,
        scope: projects::player_search_scope(&project),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use matchplane_store::db::connect;

    #[tokio::test]
    async fn made_up_mode_names_leave_nothing_behind() {
        let db = connect("sqlite::memory:").await.unwrap();
        matchplane_migrations::migrate(&db).await.unwrap();
        let cache = ConfigCache::default();
        // Valid, but absent: a "no such mode" entry, kept for its TTL.
        assert!(cache.mode(&db, "prj_1", "duel").await.unwrap().is_none());
        assert_eq!(
            cache.modes.peek(&ModeRef("prj_1", "duel")).await,
            Some(None)
        );
        for name in ["Duel", "", &"x".repeat(64), "du el", "duel\n"] {
            assert!(cache.mode(&db, "prj_1", name).await.unwrap().is_none());
            assert_eq!(cache.modes.peek(&ModeRef("prj_1", name)).await, None);
        }
        assert!(!cache.knows_mode("prj_1", "duel").await);
    }

    #[test]
    fn a_borrowed_mode_hashes_as_the_stored_one() {
        use std::hash::BuildHasher;
        let hasher = foldhash::fast::FixedState::with_seed(7);
        let stored = ("prj_1".to_owned(), "duel".to_owned());
        assert_eq!(
            hasher.hash_one(ModeRef("prj_1", "duel")),
            hasher.hash_one(&stored)
        );
        assert!(ModeRef("prj_1", "duel").equivalent(&stored));
        assert!(!ModeRef("prj_1d", "uel").equivalent(&stored));
    }
}
