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
//!
//! A request cut while its handler waits for the request's own body (a
//! client that announced more than it sends, or sends it a byte at a time)
//! is the client's slowness, not a dependency's: it is answered `408
//! REQUEST_TIMEOUT`, without `Retry-After`, and not logged as a warning.

use crate::problem::ApiError;
use crate::state::AppState;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
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
pub async fn run(state: &AppState, request: Request, next: Next) -> Response {
    let deadline = state.request_deadline;
    let waiting = Arc::new(AtomicBool::new(false));
    let mut request = request.map(|body| {
        Body::new(Watched {
            body,
            waiting: Arc::clone(&waiting),
        })
    });
    request
        .extensions_mut()
        .insert(Deadline(Instant::now() + deadline));
    // For the warning of a request cut (cheap clones: reference counts).
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let route = request.extensions().get::<MatchedPath>().cloned();
    let deadline_ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) if waiting.load(Ordering::Relaxed) => {
            tracing::debug!(
                deadline_ms,
                "request cut at its deadline: its body did not arrive"
            );
            ApiError::request_timeout().into_response()
        }
        Err(_) => {
            let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
            let named = |name: &str| path_value(route, uri.path(), name).unwrap_or_default();
            tracing::warn!(
                deadline_ms,
                method = %method,
                route,
                project_id = named("{projectId}"),
                game_mode = named("{name}"),
                "request cut at its deadline: a dependency did not answer"
            );
            ApiError::unavailable("a dependency did not answer in time").into_response()
        }
    }
}

/// The segment of `path` that route template `route` names `name` (say
/// `{projectId}`), for the log: the route's own words, never the rest of
/// the path (which may hold a player id).
fn path_value<'p>(route: &str, path: &'p str, name: &str) -> Option<&'p str> {
    route
        .split('/')
        .zip(path.split('/'))
        .find(|(template, _)| *template == name)
        .map(|(_, value)| value)
}

/// A request body that tells whether its reader waits for it: `waiting`
/// is set while its last poll found nothing to read yet.
struct Watched {
    body: Body,
    waiting: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        self.waiting.store(polled.is_pending(), Ordering::Relaxed);
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::path_value;
    use crate::state::{ApiConfig, AppState};
    use axum::body::{Body, Bytes};
    use axum::http::{header, Request, StatusCode};
    use axum::routing::post;
    use axum::Router;
    use std::time::Duration;
    use tower::ServiceExt;

    /// A handler that waits on a dependency past the deadline is `503`
    /// with `Retry-After`; one that waits on a body that never comes,
    /// `408` without it.
    #[tokio::test]
    async fn the_deadline_blames_the_client_only_for_its_own_body() {
        let db = matchplane_store::db::connect("sqlite::memory:")
            .await
            .unwrap();
        let state = AppState::new(db, ApiConfig::default())
            .with_request_deadline(Duration::from_millis(200));
        let app = Router::new()
            .route(
                "/v1/projects/{projectId}/game-modes/{name}/stalled",
                post(|body: Bytes| async move {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    body
                }),
            )
            .route("/stalled-body", post(|body: Bytes| async move { body }))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                crate::edge::edge,
            ))
            .with_state(state);
        let send = |path: &str, body: Body| {
            let request = Request::post(path).body(body).unwrap();
            app.clone().oneshot(request)
        };
        let logged = Logged::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(logged.clone())
            .with_ansi(false)
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        let stalled = "/v1/projects/prj_1/game-modes/duel/stalled";
        let dependency = send(stalled, Body::from("{}")).await.unwrap();
        drop(guard);
        assert_eq!(dependency.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(dependency.headers().contains_key(header::RETRY_AFTER));
        // Its warning names the request: method, route, project, mode.
        let line = logged.text();
        for part in [
            "WARN",
            "method=POST",
            "route=\"/v1/projects/{projectId}/game-modes/{name}/stalled\"",
            "project_id=\"prj_1\"",
            "game_mode=\"duel\"",
        ] {
            assert!(line.contains(part), "{part} not in {line}");
        }
        let never = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let body = send("/stalled-body", Body::from_stream(never))
            .await
            .unwrap();
        assert_eq!(body.status(), StatusCode::REQUEST_TIMEOUT);
        assert!(!body.headers().contains_key(header::RETRY_AFTER));
    }

    /// Log lines written in a test.
    #[derive(Clone, Default)]
    struct Logged(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Logged {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    impl std::io::Write for Logged {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> tracing_subscriber::fmt::MakeWriter<'w> for Logged {
        type Writer = Logged;

        fn make_writer(&'w self) -> Logged {
            self.clone()
        }
    }

    /// The warning names the project and the mode by the route's template.
    #[test]
    fn a_cut_request_is_named_by_its_route() {
        let route = "/v1/projects/{projectId}/game-modes/{name}/stats";
        let path = "/v1/projects/prj_1/game-modes/duel/stats";
        assert_eq!(path_value(route, path, "{projectId}"), Some("prj_1"));
        assert_eq!(path_value(route, path, "{name}"), Some("duel"));
        assert_eq!(
            path_value("/v1/tickets/{ticketId}", "/v1/tickets/t", "{name}"),
            None
        );
    }
}
