//! Who is calling (docs/api-keys.md): the operator (`Authorization: Bearer <operator
//! token>`, compared in constant time) or an API key of one project
//! (`Authorization: Bearer mp_sk_…`, looked up by SHA-256).
//!
//! A key acts only on its own project: on another project's path it gets
//! `404 NOT_FOUND`, exactly what an absent project answers. Key requests
//! also take a token from the project's rate-limit bucket (`429`). On its
//! own project a key may do what its scopes allow ([`crate::scopes`]):
//! outside them, `403 FORBIDDEN` naming the scope needed. Operator-only
//! routes answer every key `401` before its project is compared with the
//! path's (docs/api-keys.md), so they tell a key nothing of other projects.

use crate::cache::TtlCache;
use crate::credentials::{self as keys, digest, CredentialDigest, KEY_PREFIX};
use crate::key_usage::KeyUsage;
use crate::problem::ApiError;
use crate::scopes::{required_scope, Scope, Scopes};
use crate::state::AppState;
use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use chrono::Utc;
use matchplane_store::repos::{api_keys, projects, tiers};
use std::sync::Arc;

/// Most cached keys (found or not).
const KEY_CACHE_CAPACITY: u64 = 10_000;

/// A key that authenticated recently. Ids shared, so a hit (every request
/// of a key) clones no string.
#[derive(Debug, Clone)]
pub struct CachedKey {
    key_id: Arc<str>,
    project_id: Arc<str>,
    requests_per_second: u32,
    scopes: Scopes,
}

/// Recently looked-up keys by digest (never by plaintext); `None`: no
/// active key has this digest, so a client retrying a dead key gets its
/// `401` without a database query. The handlers that revoke keys, change a
/// project's tier, write tiers or delete projects make it stale
/// ([`TtlCache::invalidate_all`]). Through a database outage known keys
/// keep answering ([`crate::cache::OUTAGE_GRACE`]); their uses are written
/// in the background ([`KeyUsage`]).
#[derive(Debug)]
pub struct KeyCache(
    pub TtlCache<CredentialDigest, Option<CachedKey>>,
    pub KeyUsage,
);

impl Default for KeyCache {
    fn default() -> Self {
        Self(TtlCache::new(KEY_CACHE_CAPACITY), KeyUsage::default())
    }
}

impl KeyCache {
    /// A key was revoked, a project's tier changed, a tier was written or a
    /// project deleted through this instance (committed): every cached key
    /// is stale.
    pub fn written(&self) {
        self.0.invalidate_all();
    }

    /// The key stored with `hash` (hex, as in the database) was revoked
    /// through this instance: it is refused at once, without a database
    /// query while that is fresh.
    pub async fn revoked(&self, hash: &str) {
        self.written();
        let mut digest = CredentialDigest::default();
        if hex::decode_to_slice(hash, &mut digest).is_ok() {
            self.0.put(digest, None).await;
        }
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
    state
        .keys
        .0
        .get(hash, &state.play.cache.outage, || fetch_key(state, hash))
        .await
}

/// The key of `hash` from the database, if active, with its tier's rate
/// limit; its use recorded for the background writer (no write here, so a
/// read-only database still checks keys).
async fn fetch_key(
    state: &AppState,
    hash: &CredentialDigest,
) -> Result<Option<CachedKey>, ApiError> {
    let Some(key) = api_keys::find_active_by_hash(&state.db, &hex::encode(hash)).await? else {
        return Ok(None);
    };
    let project = projects::get(&state.db, &key.project_id).await?;
    let tier = tiers::get(&state.db, &project.tier).await?.to_tier();
    let cached = CachedKey {
        key_id: key.id.into(),
        project_id: key.project_id.into(),
        requests_per_second: tier.requests_per_second,
        scopes: Scopes::parse_stored(&key.scopes),
    };
    state.keys.1.record(
        &state.db,
        cached.project_id.clone(),
        cached.key_id.clone(),
        Utc::now(),
    );
    Ok(Some(cached))
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
        // Each digest compared, so that which one matched takes no
        // different time.
        let operator = state
            .operator_digests
            .iter()
            .fold(false, |any, d| keys::digests_equal(&presented, d) | any);
        if operator {
            return Ok(Caller::Operator);
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
        // `str::to_owned`, not `to_string` (through `Display` for an `Arc`).
        Ok(Caller::Key {
            project_id: key.project_id.as_ref().to_owned(),
            key_id: key.key_id.as_ref().to_owned(),
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
        let project_id = path_project(parts, state).await?;
        caller.require_project(&project_id)?;
        Ok(Self { caller, project_id })
    }
}

/// The path's `{projectId}`.
///
/// # Errors
/// `404` when the route has none, or a segment is not UTF-8 once
/// percent-decoded (no project id, mode name or other id can be such a
/// segment).
async fn path_project(parts: &mut Parts, state: &AppState) -> Result<String, ApiError> {
    let params = axum::extract::RawPathParams::from_request_parts(parts, state)
        .await
        .map_err(|_| {
            ApiError::not_found(
                "no such resource: a path segment is not UTF-8 once percent-decoded, \
                 which no id or name can be",
            )
        })?;
    params
        .iter()
        .find(|(name, _)| *name == "projectId")
        .map(|(_, value)| value.to_owned())
        .ok_or_else(|| ApiError::not_found("no such project"))
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

/// The operator on a project path, checked before any body is read and
/// before the path's project: every key gets `401`, whatever its project
/// or scopes (docs/api-keys.md), so a key learns nothing of whether
/// another project exists.
#[derive(Debug, Clone)]
pub struct ProjectOperator {
    /// The project of the path.
    pub project_id: String,
}

impl FromRequestParts<AppState> for ProjectOperator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Operator::from_request_parts(parts, state).await?;
        Ok(Self {
            project_id: path_project(parts, state).await?,
        })
    }
}
