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

use crate::problem::ApiError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Runs the request under the state's deadline.
pub async fn layer(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let deadline = state.request_deadline;
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
