//! Request metrics (SPEC 7 `/metrics`): a counter of requests by method,
//! route template and status, and a latency histogram by method and route.
//! Route templates (`/v1/projects/{projectId}`), never raw paths, so no id
//! or secret can become a label; the one log line per request carries the
//! same fields (never the raw URI, whose query may hold a ticket token).

use crate::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// Counter: `matchplane_http_requests_total{method,route,status}`.
pub const REQUESTS_TOTAL: &str = "matchplane_http_requests_total";
/// Histogram (seconds): `matchplane_http_request_duration_seconds{method,route}`.
pub const REQUEST_DURATION: &str = "matchplane_http_request_duration_seconds";

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// Middleware recording one request into the router's own recorder.
pub async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = method_label(req.method());
    let start = Instant::now();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let elapsed = start.elapsed().as_secs_f64();
    tracing::info!(
        method,
        route = %route,
        status = %status,
        latency_ms = elapsed * 1000.0,
        "request"
    );
    metrics::with_local_recorder(&*state.recorder, || {
        metrics::counter!(REQUESTS_TOTAL, "method" => method, "route" => route.clone(), "status" => status)
            .increment(1);
        metrics::histogram!(REQUEST_DURATION, "method" => method, "route" => route).record(elapsed);
    });
    response
}
