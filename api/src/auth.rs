//! Who is calling (SPEC 2): the operator (`Authorization: Bearer <operator
//! token>`, compared in constant time) or an API key of one project
//! (`Authorization: Bearer mp_sk_…`, looked up by SHA-256).
//!
//! A key acts only on its own project: on another project's path it gets
//! `404 NOT_FOUND`, exactly what an absent project answers. Key requests
//! also take a token from the project's rate-limit bucket (`429`). On its
//! own project a key may do what its scopes allow ([`crate::scopes`]):
//! outside them, `403 FORBIDDEN` naming the scope needed.

use crate::cache_entry::{resolve, CacheEntry, Evictions, Flights, Lookup};
use crate::credentials::{self as keys, digest, CredentialDigest, KEY_PREFIX};
use crate::problem::ApiError;
use crate::scopes::{required_scope, Scope, Scopes};
use crate::state::AppState;
use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use chrono::Utc;
use foldhash::fast::RandomState;
use matchplane_store::repos::{api_keys, projects, tiers};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a successful key lookup is reused without asking the database,
/// counted from before the lookup's query. Revocation and tier changes made
/// through this process evict at once; another replica's change is seen
/// within this time (issue: "within a second by every other instance").
/// A key in use is looked up again by one request from half this age on
/// ([`CacheEntry`]): about two look-ups a second per key, whatever the load.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(1);

/// Cache size (entries) from which expired entries are dropped on insert.
const KEY_CACHE_PURGE_AT: usize = 10_000;

/// A key that authenticated recently. Ids shared, so a hit (every request
/// of a key) clones no string.
#[derive(Debug, Clone)]
struct CachedKey {
    key_id: Arc<str>,
    project_id: Arc<str>,
    requests_per_second: u32,
    scopes: Scopes,
}

/// Recently authenticated keys by digest (never by plaintext). foldhash:
/// the keys are already SHA-256 digests.
#[derive(Debug, Default)]
pub struct KeyCache {
    entries: Mutex<HashMap<CredentialDigest, CacheEntry<CachedKey>, RandomState>>,
    /// Hashes recently looked up and not found (or revoked): a client
    /// retrying a dead key gets its 401 without a database query. A hash
    /// cannot become valid later (new keys are fresh random values).
    misses: Mutex<HashMap<CredentialDigest, Instant, RandomState>>,
    /// Look-ups in flight: requests that miss on the same key at once (a
    /// burst on a key idle for a second) share one look-up.
    flights: Flights<(CredentialDigest, u64), Option<CachedKey>>,
    /// Evictions so far: a look-up started before one stores nothing.
    evictions: Evictions,
}

impl KeyCache {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<CredentialDigest, CacheEntry<CachedKey>, RandomState>>
    {
        match self.entries.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn lookup(&self, hash: &CredentialDigest) -> Lookup<CachedKey> {
        let now = Instant::now();
        self.lock()
            .get_mut(hash)
            .map_or(Lookup::Miss, |e| e.lookup(KEY_CACHE_TTL, now))
    }

    fn recently_missed(&self, hash: &CredentialDigest) -> bool {
        let misses = match self.misses.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        misses
            .get(hash)
            .is_some_and(|at| at.elapsed() < KEY_CACHE_TTL)
    }

    fn record_miss(&self, hash: &CredentialDigest) {
        let mut misses = match self.misses.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if misses.len() >= KEY_CACHE_PURGE_AT {
            misses.retain(|_, at| at.elapsed() < KEY_CACHE_TTL);
        }
        if misses.len() < KEY_CACHE_PURGE_AT {
            misses.insert(*hash, Instant::now());
        }
    }

    /// Stores a look-up's answer, unless an eviction happened since the
    /// look-up began (when [`Evictions::current`] was `seen`).
    fn put(&self, seen: u64, hash: CredentialDigest, entry: CacheEntry<CachedKey>) {
        let mut entries = self.lock();
        if !self.evictions.unchanged_since(seen) {
            return;
        }
        if entries.len() >= KEY_CACHE_PURGE_AT {
            let now = Instant::now();
            entries.retain(|_, e| e.is_valid(KEY_CACHE_TTL, now));
        }
        entries.insert(hash, entry);
    }

    /// Forgets a key found revoked (or gone) by a look-up.
    fn forget(&self, hash: &CredentialDigest) {
        self.lock().remove(hash);
        self.record_miss(hash);
    }

    /// Forgets a key (after revocation); its next use is a 401 at once.
    pub fn evict_key(&self, key_id: &str) {
        self.evictions.record();
        let mut entries = self.lock();
        let revoked: Vec<CredentialDigest> = entries
            .iter()
            .filter(|(_, e)| &*e.value().key_id == key_id)
            .map(|(hash, _)| *hash)
            .collect();
        entries.retain(|_, e| &*e.value().key_id != key_id);
        drop(entries);
        for hash in revoked {
            self.record_miss(&hash);
        }
    }

    /// Forgets every cached key (after a tier changed).
    pub fn evict_all(&self) {
        self.evictions.record();
        self.lock().clear();
    }

    /// Forgets every key of a project (after a tier change or deletion).
    pub fn evict_project(&self, project_id: &str) {
        self.evictions.record();
        self.lock()
            .retain(|_, e| &*e.value().project_id != project_id);
    }
}

/// The authenticated caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The operator: may manage tiers and every project.
    Operator,
    /// An API key of one project.
    Key {
        /// The project the key belongs to.
        project_id: String,
        /// The key's id (`key_…`).
        key_id: String,
        /// What the key may do.
        scopes: Scopes,
    },
}

impl Caller {
    /// The caller's scopes: every scope for the operator.
    pub fn scopes(&self) -> Scopes {
        match self {
            Caller::Operator => Scopes::ALL,
            Caller::Key { scopes, .. } => *scopes,
        }
    }

    /// Allows a caller holding `needed` (or `admin`).
    ///
    /// # Errors
    /// `403 FORBIDDEN` naming `needed`.
    pub fn require_scope(&self, needed: Scope) -> Result<(), ApiError> {
        if self.scopes().allow(needed) {
            Ok(())
        } else {
            Err(ApiError::forbidden(needed))
        }
    }

    /// Allows the operator only.
    ///
    /// # Errors
    /// `401 UNAUTHORIZED` for an API key.
    pub fn require_operator(&self) -> Result<(), ApiError> {
        match self {
            Caller::Operator => Ok(()),
            Caller::Key { .. } => Err(ApiError::unauthorized(
                "this route needs the operator token",
            )),
        }
    }

    /// Allows the operator or a key of `project_id`.
    ///
    /// # Errors
    /// `404 NOT_FOUND` for a key of another project.
    pub fn require_project(&self, project_id: &str) -> Result<(), ApiError> {
        match self {
            Caller::Operator => Ok(()),
            Caller::Key {
                project_id: own, ..
            } if own == project_id => Ok(()),
            Caller::Key { .. } => Err(ApiError::not_found("no such project")),
        }
    }

    /// Allows the operator only, on a project path: a key of another
    /// project gets `404` (it must not learn the project exists), a key of
    /// this project `401`.
    ///
    /// # Errors
    /// As above.
    pub fn require_operator_on(&self, project_id: &str) -> Result<(), ApiError> {
        self.require_project(project_id)?;
        self.require_operator()
    }
}

fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

async fn lookup_key(
    state: &AppState,
    hash: &CredentialDigest,
) -> Result<Option<CachedKey>, ApiError> {
    // Taken before the look-up: see Evictions.
    let seen = state.keys.evictions.current();
    let lookup = match state.keys.lookup(hash) {
        Lookup::Hit(key) => return Ok(Some(key)),
        Lookup::Miss if state.keys.recently_missed(hash) => return Ok(None),
        other => other.map(Some),
    };
    resolve(
        lookup,
        &state.keys.flights,
        || (*hash, seen),
        || load_key(state, hash, seen),
        "API key",
        // The key's project is gone: so is the key.
        || state.keys.forget(hash),
    )
    .await
}

/// Looks the key of `hash` up and caches the answer, unless the cache was
/// evicted since [`Evictions::current`] was `seen`.
async fn load_key(
    state: &AppState,
    hash: &CredentialDigest,
    seen: u64,
) -> Result<Option<CachedKey>, ApiError> {
    // Taken before the query: a revocation committed while it runs is seen
    // within KEY_CACHE_TTL of the revocation, not of the answer.
    let fetched = Instant::now();
    let key = fetch_key(state, hash).await?;
    match &key {
        Some(key) => state
            .keys
            .put(seen, *hash, CacheEntry::new(key.clone(), fetched)),
        None => state.keys.forget(hash),
    }
    Ok(key)
}

/// The key of `hash` from the database, if active, with its tier's rate
/// limit; marks it used.
async fn fetch_key(
    state: &AppState,
    hash: &CredentialDigest,
) -> Result<Option<CachedKey>, ApiError> {
    let Some(key) = api_keys::find_active_by_hash(&state.db, &hex::encode(hash)).await? else {
        return Ok(None);
    };
    let project = projects::get(&state.db, &key.project_id).await?;
    let tier = tiers::get(&state.db, &project.tier).await?.to_tier();
    api_keys::touch(&state.db, &key.project_id, &key.id, Utc::now()).await?;
    Ok(Some(CachedKey {
        key_id: key.id.into(),
        project_id: key.project_id.into(),
        requests_per_second: tier.requests_per_second,
        scopes: Scopes::parse_stored(&key.scopes),
    }))
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Some(token) = bearer(parts) else {
            return Err(ApiError::unauthorized(
                "send Authorization: Bearer <API key or operator token>",
            ));
        };
        let presented = digest(token);
        if let Some(operator) = &state.operator_digest {
            if keys::digests_equal(&presented, operator) {
                return Ok(Caller::Operator);
            }
        }
        if !token.starts_with(KEY_PREFIX) {
            return Err(ApiError::unauthorized("invalid credentials"));
        }
        let Some(key) = lookup_key(state, &presented).await? else {
            return Err(ApiError::unauthorized("invalid credentials"));
        };
        state
            .limiter
            .check(&key.project_id, key.requests_per_second)
            .map_err(ApiError::rate_limited)?;
        Ok(Caller::Key {
            project_id: key.project_id.to_string(),
            key_id: key.key_id.to_string(),
            scopes: key.scopes,
        })
    }
}

/// A caller already allowed on the path's `{projectId}`: the operator, or a
/// key of that very project whose scopes allow the route
/// ([`required_scope`]). Extracted before any body is read, so another
/// tenant's path answers `404`, and a route outside the key's scopes `403`,
/// whatever the body holds.
#[derive(Debug, Clone)]
pub struct ProjectCaller {
    /// Who is calling.
    pub caller: Caller,
    /// The project of the path.
    pub project_id: String,
}

impl FromRequestParts<AppState> for ProjectCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Already extracted for this very request (by the idempotency
        // layer): not authenticated, nor rate limited, twice.
        if let Some(known) = parts.extensions.get::<ProjectCaller>() {
            return Ok(known.clone());
        }
        let on_project = Self::on_project(parts, state).await?;
        let route = parts
            .extensions
            .get::<MatchedPath>()
            .map(MatchedPath::as_str);
        if let Some(needed) = required_scope(&parts.method, route) {
            on_project.caller.require_scope(needed)?;
        }
        Ok(on_project)
    }
}

impl ProjectCaller {
    /// The caller, allowed on the path's project, scopes not checked yet.
    async fn on_project(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let params = axum::extract::RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::not_found("no such project"))?;
        let project_id = params
            .iter()
            .find(|(name, _)| *name == "projectId")
            .map(|(_, value)| value.to_owned())
            .ok_or_else(|| ApiError::not_found("no such project"))?;
        caller.require_project(&project_id)?;
        Ok(Self { caller, project_id })
    }
}

/// The operator, checked before any body is read: an API key gets `401`
/// even when its body is malformed (it must not learn how the body is
/// validated).
#[derive(Debug, Clone, Copy)]
pub struct Operator;

impl FromRequestParts<AppState> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Caller::from_request_parts(parts, state)
            .await?
            .require_operator()?;
        Ok(Self)
    }
}

/// The operator on a project path, checked before any body is read: a key
/// of another project gets `404` (as [`Caller::require_operator_on`]), a
/// key of this project `401`.
#[derive(Debug, Clone)]
pub struct ProjectOperator {
    /// The project of the path.
    pub project_id: String,
}

impl FromRequestParts<AppState> for ProjectOperator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Operator routes answer a key `401` whatever its scopes.
        let ProjectCaller { caller, project_id } = ProjectCaller::on_project(parts, state).await?;
        caller.require_operator()?;
        Ok(Self { project_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_up_begun_before_a_revocation_caches_nothing() {
        let cache = KeyCache::default();
        let hash = [1u8; 32];
        let key = CachedKey {
            key_id: "key_1".into(),
            project_id: "prj_1".into(),
            requests_per_second: 10,
            scopes: Scopes::BACKEND,
        };
        let seen = cache.evictions.current();
        // The key is revoked through this instance while the look-up runs.
        cache.evict_key("key_1");
        cache.put(seen, hash, CacheEntry::new(key.clone(), Instant::now()));
        assert!(matches!(cache.lookup(&hash), Lookup::Miss));
        // A look-up begun after the revocation is cached.
        let seen = cache.evictions.current();
        cache.put(seen, hash, CacheEntry::new(key, Instant::now()));
        assert!(matches!(cache.lookup(&hash), Lookup::Hit(_)));
    }
}
