//! Request metrics (docs/api-tour.md `/metrics`): a counter of requests by method,
//! route template and status, and a latency histogram by method and route.
//! Route templates (`/v1/projects/{projectId}`), never raw paths, so no id
//! or secret can become a label; the one log line per request carries the
//! same fields (never the raw URI, whose query may hold a ticket token). That
//! line is at `debug` (`RUST_LOG=matchplane_api=debug`), as tower-http's
//! tracing does: at tens of thousands of tickets a second a line per request
//! would cost more than the request, and the metrics already count them.

use crate::state::AppState;
use axum::extract::{MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use foldhash::fast::RandomState;
use metrics::{Counter, Histogram};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

mod merge;
mod ops;

pub use merge::merge_expositions;
pub use ops::{LiveOps, SearchEnds, DEPENDENCY_UP, RATE_LIMITED, WEBSOCKETS_OPEN};

/// Counter: `matchplane_http_requests_total{method,route,status}`.
pub const REQUESTS_TOTAL: &str = "matchplane_http_requests_total";
/// Histogram (seconds): `matchplane_http_request_duration_seconds{method,route}`.
pub const REQUEST_DURATION: &str = "matchplane_http_request_duration_seconds";

/// Describes every API metric (`# HELP` and unit) in the current recorder;
/// [`crate::AppState::new`] calls it on the router's own recorder.
pub fn describe() {
    metrics::describe_counter!(
        REQUESTS_TOTAL,
        metrics::Unit::Count,
        "HTTP requests answered, by method, route template and status code"
    );
    metrics::describe_histogram!(
        REQUEST_DURATION,
        metrics::Unit::Seconds,
        "Time to answer an HTTP request (seconds), by method and route template"
    );
}

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

/// A request being answered: what its metrics and log line will carry.
/// Taken before the handler runs, recorded after (see `crate::edge`).
#[derive(Debug)]
pub struct Observed {
    method: &'static str,
    route: Option<MatchedPath>,
    start: Instant,
}

impl Observed {
    /// Starts timing `req`.
    pub fn start(req: &Request) -> Self {
        Self {
            method: method_label(req.method()),
            route: req.extensions().get::<MatchedPath>().cloned(),
            start: Instant::now(),
        }
    }

    /// Records the answer into the router's own recorder and logs one line.
    pub fn record(self, state: &AppState, response: &Response) {
        let route = self.route.as_ref().map_or("unmatched", MatchedPath::as_str);
        let status = response.status();
        let elapsed = self.start.elapsed().as_secs_f64();
        tracing::debug!(
            method = self.method,
            route = %route,
            status = status.as_u16(),
            latency_ms = elapsed * 1000.0,
            "request"
        );
        let (requests, duration) = state
            .request_metrics
            .handles(state, self.method, route, status);
        requests.increment(1);
        duration.record(elapsed);
    }
}

/// One route's metric handles for one method and status.
#[derive(Debug)]
struct Handles {
    method: &'static str,
    status: StatusCode,
    requests: Counter,
    duration: Histogram,
}

/// The request metrics' handles, registered once per method, route and
/// status and then reused: registering builds label sets and looks them up
/// in the recorder's registry, which showed in the ticket route's profile.
/// Bounded: routes are the router's templates, statuses a handful.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    by_route: Mutex<HashMap<String, Vec<Handles>, RandomState>>,
}

impl RequestMetrics {
    fn handles(
        &self,
        state: &AppState,
        method: &'static str,
        route: &str,
        status: StatusCode,
    ) -> (Counter, Histogram) {
        let mut by_route = self.by_route.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = by_route.get(route).and_then(|all| {
            all.iter()
                .find(|h| h.method == method && h.status == status)
        }) {
            return (found.requests.clone(), found.duration.clone());
        }
        let (requests, duration) = metrics::with_local_recorder(&*state.recorder, || {
            (
                metrics::counter!(
                    REQUESTS_TOTAL,
                    "method" => method,
                    "route" => route.to_owned(),
                    "status" => status_label(status)
                ),
                metrics::histogram!(REQUEST_DURATION, "method" => method, "route" => route.to_owned()),
            )
        });
        by_route.entry(route.to_owned()).or_default().push(Handles {
            method,
            status,
            requests: requests.clone(),
            duration: duration.clone(),
        });
        (requests, duration)
    }
}

/// The status as a label without allocating for the common ones.
fn status_label(status: StatusCode) -> metrics::SharedString {
    match status.as_u16() {
        200 => "200".into(),
        201 => "201".into(),
        202 => "202".into(),
        204 => "204".into(),
        400 => "400".into(),
        401 => "401".into(),
        404 => "404".into(),
        409 => "409".into(),
        422 => "422".into(),
        429 => "429".into(),
        500 => "500".into(),
        other => other.to_string().into(),
    }
}
