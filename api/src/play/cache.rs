//! Mode configs and project quotas for the hot path, cached for
//! [`CONFIG_CACHE_TTL`] so ticket generation and search start query no
//! database. A change made through this process evicts at once
//! ([`ConfigWrite`] watches every successful write under a
//! project or a tier); another replica's change is seen within the TTL.

use crate::cache_entry::{resolve, CacheEntry, Evictions, Flights, Lookup};
use crate::problem::ApiError;
use crate::state::AppState;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use matchplane_matchmaker::validation::is_valid_name;
use matchplane_matchmaker::GameModeConfig;
use matchplane_store::repos::{game_modes, projects, tiers, StoreError};
use percent_encoding::percent_decode_str;
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a cached config or quota is used without asking the database,
/// counted from before its query. One request looks it up again from half
/// this age on ([`CacheEntry`]), so a mode in use is queried about twice a
/// second per instance, whatever the load.
pub const CONFIG_CACHE_TTL: Duration = Duration::from_secs(1);

type ModeEntry = CacheEntry<Option<Arc<GameModeConfig>>>;

/// Cached modes (entries) from which expired ones are dropped on insert.
const MODE_CACHE_PURGE_AT: usize = 10_000;

/// A project's tier limits the hot path needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// `maxConcurrentSearches`.
    pub max_live: u64,
    /// `maxPendingTickets`.
    pub max_pending: u64,
}

/// Cached mode configs (`None`: no such mode) and project quotas.
#[derive(Default)]
pub struct ConfigCache {
    /// By project, then by mode name: a hit is looked up by `&str`, with no
    /// allocation (ticket generation and search start are hot paths).
    modes: Mutex<HashMap<String, HashMap<String, ModeEntry>>>,
    quotas: Mutex<HashMap<String, CacheEntry<Quotas>>>,
    /// Look-ups in flight, shared by the requests that miss on the same
    /// mode (or project) at once.
    mode_flights: Flights<(String, String, u64), Option<Arc<GameModeConfig>>>,
    quota_flights: Flights<(String, u64), Quotas>,
    /// Evictions so far: a look-up started before one stores nothing.
    evictions: Evictions,
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
        // No mode has such a name (SPEC 3): answered without the database
        // or a cache entry, so made-up names cannot fill the cache.
        if !is_valid_name(name) {
            return Ok(None);
        }
        let now = Instant::now();
        // Taken before the look-up: see Evictions.
        let seen = self.evictions.current();
        let cached = self
            .modes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(project_id)
            .and_then(|modes| modes.get_mut(name))
            .map_or(Lookup::Miss, |entry| entry.lookup(CONFIG_CACHE_TTL, now));
        resolve(
            cached,
            &self.mode_flights,
            || (project_id.to_owned(), name.to_owned(), seen),
            || self.load_mode(db, project_id, name, seen),
            "mode config",
            || {},
        )
        .await
    }

    /// Looks `project_id`'s mode `name` up and caches the answer, unless the
    /// cache was evicted since [`Evictions::current`] was `seen`.
    async fn load_mode(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
        name: &str,
        seen: u64,
    ) -> Result<Option<Arc<GameModeConfig>>, ApiError> {
        // Taken before the query: a change committed while it runs is seen
        // within CONFIG_CACHE_TTL of the change.
        let fetched = Instant::now();
        let config = fetch_mode(db, project_id, name).await?;
        self.store_mode(
            seen,
            project_id,
            name,
            CacheEntry::new(config.clone(), fetched),
        );
        Ok(config)
    }

    /// Caches a look-up's answer, unless an eviction happened since it
    /// began (when [`Evictions::current`] was `seen`): an edit made through
    /// this instance while the query ran must not be undone by the query's
    /// possibly older answer.
    fn store_mode(&self, seen: u64, project_id: &str, name: &str, entry: ModeEntry) {
        let mut modes = self.modes.lock().unwrap_or_else(PoisonError::into_inner);
        // Entries of modes nobody asks for any more (or that never existed)
        // go once the cache is large, so it holds at most about a second's
        // worth of distinct look-ups beyond this size.
        if modes.values().map(HashMap::len).sum::<usize>() >= MODE_CACHE_PURGE_AT {
            let now = Instant::now();
            for project in modes.values_mut() {
                project.retain(|_, e| e.is_valid(CONFIG_CACHE_TTL, now));
            }
            modes.retain(|_, project| !project.is_empty());
        }
        if self.evictions.unchanged_since(seen) {
            modes
                .entry(project_id.to_owned())
                .or_default()
                .insert(name.to_owned(), entry);
        }
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
            .is_some_and(|entry| entry.value().is_some())
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

    /// `project_id`'s tier limits, cached.
    ///
    /// # Errors
    /// `404` for an unknown project, `500` on a database failure.
    async fn quotas(&self, db: &DatabaseConnection, project_id: &str) -> Result<Quotas, ApiError> {
        let now = Instant::now();
        let seen = self.evictions.current();
        let cached = self
            .quotas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(project_id)
            .map_or(Lookup::Miss, |entry| entry.lookup(CONFIG_CACHE_TTL, now));
        resolve(
            cached,
            &self.quota_flights,
            || (project_id.to_owned(), seen),
            || self.load_max_live(db, project_id, seen),
            "quota",
            // The project is gone: so is its quota.
            || {
                self.quotas
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(project_id);
            },
        )
        .await
    }

    /// Looks `project_id`'s quota up and caches it, unless the cache was
    /// evicted since [`Evictions::current`] was `seen`.
    async fn load_max_live(
        &self,
        db: &DatabaseConnection,
        project_id: &str,
        seen: u64,
    ) -> Result<Quotas, ApiError> {
        let fetched = Instant::now();
        let max = fetch_quotas(db, project_id).await?;
        let mut quotas = self.quotas.lock().unwrap_or_else(PoisonError::into_inner);
        if self.evictions.unchanged_since(seen) {
            quotas.insert(project_id.to_owned(), CacheEntry::new(max, fetched));
        }
        Ok(max)
    }

    /// Forgets everything cached of a project.
    pub fn evict_project(&self, project_id: &str) {
        self.evictions.record();
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
        self.evictions.record();
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
    })
}

/// A request that may change cached configs: a successful write to
/// `/v1/projects/{projectId}` or to its `game-modes` (a mode created,
/// replaced or deleted, a project's tier changed or the project deleted)
/// makes this process forget that project's cached configs; one under
/// `/v1/tiers`, all of them. Other writes under a project (tickets,
/// searches, results, ratings, keys, deliveries) change no config and are
/// not one. Read before the handler runs, applied after it answered (see
/// `crate::edge`).
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
        // Segment by segment, percent-decoded as the router decodes the
        // handlers' path parameters: `/v1/projects/%70rj_1/…` is a write to
        // `prj_1`, and must forget `prj_1`'s configs. (No allocation unless
        // a segment holds an escape: every ticket request passes here.)
        let mut segments = req
            .uri()
            .path()
            .split('/')
            .map(|segment| percent_decode_str(segment).decode_utf8_lossy());
        let mut next = || segments.next();
        if !next()?.is_empty() || next()? != "v1" {
            return None;
        }
        match next()?.as_ref() {
            "tiers" => return Some(Self::Tiers),
            "projects" => {}
            _ => return None,
        }
        let project_id = next()?;
        // The project itself (its tier) and its modes' configs; not ratings,
        // results, keys, tickets or deliveries under them, which change
        // nothing cached here (and would void look-ups in flight).
        let config = match (next(), next(), next()) {
            (None, _, _) => true,
            (Some(modes), None, _) => modes == "game-modes",
            (Some(modes), Some(name), None) => modes == "game-modes" && !name.is_empty(),
            _ => false,
        };
        (config && !project_id.is_empty()).then(|| Self::Project(project_id.into_owned()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use matchplane_store::db::connect;

    #[test]
    fn only_config_writes_evict() {
        let of = |method: Method, path: &str| {
            ConfigWrite::of(
                &Request::builder()
                    .method(method)
                    .uri(path)
                    .body(Default::default())
                    .unwrap(),
            )
        };
        let project = Some(ConfigWrite::Project("prj_1".into()));
        assert_eq!(of(Method::PATCH, "/v1/projects/prj_1"), project);
        assert_eq!(of(Method::DELETE, "/v1/projects/prj_1"), project);
        assert_eq!(of(Method::POST, "/v1/projects/prj_1/game-modes"), project);
        assert_eq!(
            of(Method::PUT, "/v1/projects/prj_1/game-modes/duel"),
            project
        );
        assert_eq!(
            of(Method::DELETE, "/v1/projects/prj_1/game-modes/duel"),
            project
        );
        assert_eq!(of(Method::PUT, "/v1/tiers/pro"), Some(ConfigWrite::Tiers));
        // Percent-encoded, as the router decodes it for the handler.
        assert_eq!(
            of(Method::PUT, "/v1/projects/%70rj_1/game-modes/duel"),
            project
        );
        assert_eq!(
            of(Method::PUT, "/v1/projects/prj_1/%67ame-modes/duel"),
            project
        );
        assert_eq!(of(Method::PATCH, "/v1/projects/prj%5F1"), project);
        assert_eq!(of(Method::PUT, "/v1/%74iers/pro"), Some(ConfigWrite::Tiers));
        for path in [
            "/v1/projects/prj_1/tickets",
            "/v1/projects/prj_1/game-modes/duel/results",
            "/v1/projects/prj_1/game-modes/duel/ratings/p1",
            "/v1/projects/prj_1/game-modes/duel/webhook/test",
            "/v1/projects/prj_1/keys",
            "/v1/projects/prj_1/matches/mat_1/deliveries/redeliver",
            "/v1/projects/prj_1/players/p1/searches",
        ] {
            assert_eq!(of(Method::POST, path), None, "{path}");
        }
        assert_eq!(of(Method::GET, "/v1/projects/prj_1"), None);
    }

    #[tokio::test]
    async fn made_up_mode_names_leave_nothing_behind() {
        let db = connect("sqlite::memory:").await.unwrap();
        matchplane_migrations::migrate(&db).await.unwrap();
        let cache = ConfigCache::default();
        // Valid, but absent: a "no such mode" entry, kept for its TTL.
        assert!(cache.mode(&db, "prj_1", "duel").await.unwrap().is_none());
        assert!(cache.modes.lock().unwrap()["prj_1"].contains_key("duel"));
        cache.modes.lock().unwrap().clear();
        for name in ["Duel", "", &"x".repeat(64), "du el", "duel\n"] {
            assert!(cache.mode(&db, "prj_1", name).await.unwrap().is_none());
        }
        assert!(cache.modes.lock().unwrap().is_empty());
    }

    #[test]
    fn expired_modes_go_once_the_cache_is_large() {
        let cache = ConfigCache::default();
        let long_ago = Instant::now() - CONFIG_CACHE_TTL * 2;
        for i in 0..MODE_CACHE_PURGE_AT {
            let seen = cache.evictions.current();
            cache.store_mode(
                seen,
                "prj_1",
                &format!("m{i}"),
                CacheEntry::new(None, long_ago),
            );
        }
        let seen = cache.evictions.current();
        cache.store_mode(seen, "prj_2", "duel", CacheEntry::new(None, Instant::now()));
        let modes = cache.modes.lock().unwrap();
        assert_eq!(modes.len(), 1, "only prj_2 is left");
        assert!(modes["prj_2"].contains_key("duel"));
    }

    #[test]
    fn a_look_up_begun_before_an_edit_caches_nothing() {
        let cache = ConfigCache::default();
        let seen = cache.evictions.current();
        // The mode is edited through this instance while the look-up runs.
        cache.evict_project("prj_1");
        cache.store_mode(seen, "prj_1", "duel", CacheEntry::new(None, Instant::now()));
        assert!(cache.modes.lock().unwrap().get("prj_1").is_none());
        // A look-up begun after the edit is cached.
        let seen = cache.evictions.current();
        cache.store_mode(seen, "prj_1", "duel", CacheEntry::new(None, Instant::now()));
        assert!(cache.modes.lock().unwrap()["prj_1"].contains_key("duel"));
    }
}
