//! API key scopes: what a key may do.
//!
//! - `admin`: everything a key may do.
//! - `backend`: what a game backend needs at run time: tickets and
//!   searches on a player's behalf, result and rating reports, backfill,
//!   releases and assignments of matches, holding a mode's matching, and
//!   every read. Not: creating or revoking keys, creating, replacing or deleting
//!   game modes, rotating webhook secrets, webhook tests, redeliveries,
//!   erasing a player.
//! - `read`: every read (`GET`, and the requests that compute and change
//!   nothing: simulate, preview, replay), for a dashboard or an analytics
//!   job; nothing that changes anything.
//!
//! Which scope a route needs is decided here, in one table
//! ([`required_scope`]), from the method and the route's template; a route
//! the table does not name needs `admin` (a new route is closed to
//! `backend` keys until it is classified). The operator has every scope.

use axum::http::Method;
use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::ToSchema;

/// One scope of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Everything a key may do.
    Admin,
    /// Tickets, searches, results and ratings, and every read.
    Backend,
    /// Every read and nothing else.
    Read,
}

impl Scope {
    /// The scope's name, as in `scopes`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Admin => "admin",
            Scope::Backend => "backend",
            Scope::Read => "read",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Scope::Admin => 1,
            Scope::Backend => 2,
            Scope::Read => 4,
        }
    }

    /// The scopes that allow what this one allows: itself, `admin`, and
    /// for `read` also `backend` (which includes every read), as bits.
    fn allowed_by(self) -> u8 {
        match self {
            Scope::Read => Scope::Admin.bit() | Scope::Backend.bit() | Scope::Read.bit(),
            other => Scope::Admin.bit() | other.bit(),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes (a key's), cheap to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u8);

impl Scopes {
    /// Every scope: the operator's.
    pub const ALL: Scopes = Scopes(1 | 2 | 4);
    /// `["admin"]`.
    pub const ADMIN: Scopes = Scopes(1);
    /// `["backend"]`.
    pub const BACKEND: Scopes = Scopes(2);

    /// The set of `scopes`.
    pub fn of(scopes: &[Scope]) -> Self {
        Scopes(scopes.iter().fold(0, |bits, s| bits | s.bit()))
    }

    /// Whether the set holds no scope.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether a caller with these scopes may do what `needed` allows:
    /// `admin` allows everything, `backend` every read too.
    pub fn allow(self, needed: Scope) -> bool {
        self.0 & needed.allowed_by() != 0
    }

    /// The scopes, `admin` first.
    pub fn list(self) -> Vec<Scope> {
        [Scope::Admin, Scope::Backend, Scope::Read]
            .into_iter()
            .filter(|s| self.0 & s.bit() != 0)
            .collect()
    }

    /// As stored: names separated by spaces.
    pub fn stored(self) -> String {
        self.list()
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Parses a stored value; unknown names are ignored (they grant
    /// nothing), so a corrupt row can only lose rights.
    pub fn parse_stored(stored: &str) -> Self {
        Scopes::of(
            &stored
                .split_whitespace()
                .filter_map(|name| match name {
                    "admin" => Some(Scope::Admin),
                    "backend" => Some(Scope::Backend),
                    "read" => Some(Scope::Read),
                    _ => None,
                })
                .collect::<Vec<_>>(),
        )
    }
}

/// Routes (method, template) a `backend` key may call besides reads. Every
/// other non-read project route needs `admin`.
const BACKEND_WRITES: &[(&str, &str)] = &[
    ("POST", "/v1/projects/{projectId}/tickets"),
    ("DELETE", "/v1/projects/{projectId}/tickets/{ticketId}"),
    ("POST", "/v1/projects/{projectId}/tickets/{ticketId}/accept"),
    (
        "POST",
        "/v1/projects/{projectId}/tickets/{ticketId}/decline",
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/players/{playerId}/searches",
    ),
    // A party broke up in the game: docs/game-modes.md#parties.
    (
        "DELETE",
        "/v1/projects/{projectId}/parties/{partyId}/searches",
    ),
    ("POST", "/v1/projects/{projectId}/game-modes/{name}/results"),
    // The game's servers are full: docs/game-modes.md, 'Holding matching'.
    ("POST", "/v1/projects/{projectId}/game-modes/{name}/hold"),
    ("DELETE", "/v1/projects/{projectId}/game-modes/{name}/hold"),
    (
        "POST",
        "/v1/projects/{projectId}/matches/{matchId}/backfill",
    ),
    (
        "PUT",
        "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}",
    ),
    (
        "DELETE",
        "/v1/projects/{projectId}/matches/{matchId}/backfill/{backfillId}",
    ),
    (
        "PUT",
        "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}",
    ),
    ("POST", "/v1/projects/{projectId}/matches/{matchId}/release"),
    (
        "POST",
        "/v1/projects/{projectId}/matches/{matchId}/assignment",
    ),
];

/// Requests sent as `POST` that compute and change nothing: reads, which a
/// `read` key may send.
const READ_POSTS: &[(&str, &str)] = &[
    // Computes a report from arrivals in the body.
    ("POST", "/v1/projects/{projectId}/simulate"),
    // The body is the config to try on the live pool.
    ("POST", "/v1/projects/{projectId}/game-modes/{name}/preview"),
    // Replays recorded traffic under two configs.
    ("POST", "/v1/projects/{projectId}/game-modes/{name}/replay"),
];

/// Project routes only the operator may call: no key passes them, whatever
/// its scopes, and they answer a key `401` (not `403`).
const OPERATOR_ONLY: &[(&str, &str)] = &[
    ("PATCH", "/v1/projects/{projectId}"),
    ("DELETE", "/v1/projects/{projectId}"),
];

fn listed(list: &[(&str, &str)], method: &Method, template: &str) -> bool {
    list.iter()
        .any(|(m, t)| *m == method.as_str() && *t == template)
}

/// The scope a key needs for `method` on the route `template` (axum's
/// matched path, e.g. `/v1/projects/{projectId}/tickets`): `read` for
/// reads and [`READ_POSTS`], `backend` for [`BACKEND_WRITES`], none for
/// [`OPERATOR_ONLY`] routes (their handler refuses every key), `admin` for
/// everything else (unknown routes included).
pub fn required_scope(method: &Method, template: Option<&str>) -> Option<Scope> {
    if method == Method::GET || method == Method::HEAD {
        return Some(Scope::Read);
    }
    let Some(template) = template else {
        return Some(Scope::Admin);
    };
    if listed(OPERATOR_ONLY, method, template) {
        None
    } else if listed(READ_POSTS, method, template) {
        Some(Scope::Read)
    } else if listed(BACKEND_WRITES, method, template) {
        Some(Scope::Backend)
    } else {
        Some(Scope::Admin)
    }
}

/// Documents in `openapi` the `403 FORBIDDEN` of every project route a
/// `backend` or a `read` key may not call, from the same table the server
/// applies.
pub fn document(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.contains("{projectId}") {
            continue;
        }
        for (method, operation) in [
            (Method::POST, item.post.as_mut()),
            (Method::PUT, item.put.as_mut()),
            (Method::PATCH, item.patch.as_mut()),
            (Method::DELETE, item.delete.as_mut()),
        ] {
            let Some(operation) = operation else { continue };
            let description = match required_scope(&method, Some(path)) {
                Some(Scope::Admin) => "FORBIDDEN: the API key lacks the `admin` scope",
                Some(Scope::Backend) => {
                    "FORBIDDEN: the API key lacks the `backend` scope (a `read` key)"
                }
                _ => continue,
            };
            operation
                .responses
                .responses
                .entry("403".to_owned())
                .or_insert_with(|| {
                    ResponseBuilder::new()
                        .description(description)
                        .content(
                            crate::problem::PROBLEM_JSON,
                            ContentBuilder::new()
                                .schema(Some(Ref::from_schema_name("Problem")))
                                .build(),
                        )
                        .build()
                        .into()
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_allows_everything_backend_also_reads_read_only_reads() {
        assert!(Scopes::ADMIN.allow(Scope::Backend));
        assert!(Scopes::ADMIN.allow(Scope::Admin));
        assert!(Scopes::ADMIN.allow(Scope::Read));
        assert!(Scopes::BACKEND.allow(Scope::Backend));
        assert!(Scopes::BACKEND.allow(Scope::Read));
        assert!(!Scopes::BACKEND.allow(Scope::Admin));
        let read = Scopes::of(&[Scope::Read]);
        assert!(read.allow(Scope::Read));
        assert!(!read.allow(Scope::Backend));
        assert!(!read.allow(Scope::Admin));
        assert!(!Scopes::default().allow(Scope::Read));
    }

    #[test]
    fn stored_round_trips_and_unknown_names_grant_nothing() {
        for s in [
            Scopes::ADMIN,
            Scopes::BACKEND,
            Scopes::of(&[Scope::Read]),
            Scopes::ALL,
        ] {
            assert_eq!(Scopes::parse_stored(&s.stored()), s);
        }
        assert!(Scopes::parse_stored("root superuser").is_empty());
    }

    #[test]
    fn an_unclassified_route_needs_admin() {
        assert_eq!(
            required_scope(&Method::POST, Some("/v1/projects/{projectId}/new")),
            Some(Scope::Admin)
        );
        assert_eq!(required_scope(&Method::POST, None), Some(Scope::Admin));
        assert_eq!(required_scope(&Method::GET, None), Some(Scope::Read));
    }
}
