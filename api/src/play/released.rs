//! Why a ticket's search was released (docs/searching.md, "Statuses"): the
//! `reason` of a `released` status, read from the status of the stored
//! match that released it (`released` by the studio, `unassigned` by the
//! assignment timeout), so a REST client tells an assignment timeout from
//! a release as a socket does by its `assignment_timeout` message.

use matchplane_store::repos::{match_status, matches, StoreError};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::ToSchema;

/// Why a `released` ticket's match was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReleasedReason {
    /// The studio released the match (`POST …/matches/{matchId}/release`).
    MatchReleased,
    /// Nobody posted the match's assignment within the mode's
    /// `assignment.waitSeconds` (the match is `unassigned`).
    AssignmentTimeout,
}

impl ReleasedReason {
    /// The reason of a stored match's status: `released` or `unassigned`;
    /// `None` for any other.
    pub fn of_status(status: &str) -> Option<Self> {
        match status {
            match_status::RELEASED => Some(Self::MatchReleased),
            match_status::UNASSIGNED => Some(Self::AssignmentTimeout),
            _ => None,
        }
    }

    /// The value as the status carries it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MatchReleased => "MATCH_RELEASED",
            Self::AssignmentTimeout => "ASSIGNMENT_TIMEOUT",
        }
    }
}

/// The reason match `match_id` of `project_id` released its tickets, from
/// its stored status; `None` when the match is not stored (gone with its
/// retention) or the database is out of reach, when the status is
/// `released` without it.
///
/// # Errors
/// Another database failure.
pub async fn reason_of(
    db: &DatabaseConnection,
    project_id: &str,
    match_id: &str,
) -> Result<Option<ReleasedReason>, StoreError> {
    match matches::get(db, project_id, match_id).await {
        Ok(row) => Ok(ReleasedReason::of_status(&row.status)),
        Err(StoreError::NotFound) => Ok(None),
        Err(error) if error.is_unavailable() => Ok(None),
        Err(error) => Err(error),
    }
}

/// The schema of a status's `reason`: an expired search's
/// (`ExpiredReason`) or a released one's (`ReleasedReason`).
pub fn status_reason_schema() -> Schema {
    Schema::OneOf(
        OneOfBuilder::new()
            .item(RefOr::Ref(Ref::from_schema_name("ExpiredReason")))
            .item(RefOr::Ref(Ref::from_schema_name("ReleasedReason")))
            .description(Some(
                "Why an expired search expired: `TICKET_TTL`, `REST_POLL_LAPSED`, \
                 `PONG_TIMEOUT`, `SOCKET_LAPSED` (the API instance holding its WebSocket \
                 stopped without ending it), or `SEARCH_LOST` (the pool lost the search with \
                 its data: search again, with the same ticket while the store still holds it, \
                 else with a new one). Why a released one was released: \
                 `MATCH_RELEASED` (by the studio) or `ASSIGNMENT_TIMEOUT` (nobody posted its \
                 assignment in time). Absent when not recorded.",
            ))
            .build(),
    )
}
