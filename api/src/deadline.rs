//! The request deadline: a request whose handler has not answered within
//! [`SharedState::request_deadline`](crate::state::SharedState) (10 s by
//! default, `MATCHPLANE_REQUEST_TIMEOUT_SECONDS`) is answered `503
//! SERVICE_UNAVAILABLE` with `Retry-After`, and its handler dropped.
//!
//! The stores bound their own waits (connect, pool acquire and command
//! timeouts, listed in the configuration docs); this is the last bound, for what
//! they cannot see: a PostgreSQL whose packets vanish (a query sent on an
//! open connection waits for an answer that never comes), or many slow
//! calls in one request. A WebSocket search is not cut: its upgrade answers
//! at once and the socket lives on outside the handler.
//!
//! A handler that computes for long (a simulation, a replay) reads the
//! instant as [`Deadline`] and stops in time to answer why itself.

use crate::problem::ApiError;
use crate::state::AppState;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use std::time::Instant;

/// The instant the request is cut at (see the module's comment); without
/// the layer (a router built without it), the state's deadline from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(pub Instant);

impl FromRequestParts<AppState> for Deadline {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Infallible> {
        Ok(parts
            .extensions
            .get::<Deadline>()
            .copied()
            .unwrap_or_else(|| Deadline(Instant::now() + state.request_deadline)))
    }
}

/// Runs the request under the state's deadline: part of the edge layer
/// ([`crate::edge`]), which every request goes through, so that the
/// deadline costs no layer of its own.
pub async fn run(state: &AppState, mut request: Request, next: Next) -> Response {
    let deadline = state.request_deadline;
    request
        .extensions_mut()
        .insert(Deadline(Instant::now() + deadline));
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(
                deadline_ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
                "request cut at its deadline: a dependency did not answer"
            );
            ApiError::unavailable("a dependency did not answer in time").into_response()
        }
    }
}
