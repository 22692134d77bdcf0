//! What every request goes through, as one middleware: its metrics and log
//! line ([`crate::observe`]), the refusal of a NUL in the URI and of a
//! malformed head ([`refused_head`]), the request
//! deadline ([`crate::deadline`]) and the problem safety net
//! ([`crate::problem::safety_net`]). One layer instead of four: each axum
//! `from_fn` layer costs a boxed future and a clone of the inner service
//! per request, and ticket generation is a hot path (docs/performance.md). `Idempotency-Key` is a layer of the creating
//! routes alone ([`crate::idempotency::on`]).

use crate::observe::Observed;
use crate::problem::safety_net;
use crate::problem::ApiError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use matchplane_matchmaker::{Code, FieldError};

/// Most bytes of headers (names and values) a request may carry: 64 KiB.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The middleware: observe, run the handler within the request deadline,
/// turn a non-problem error answer into a problem.
pub async fn edge(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let observed = Observed::start(&req);
    let response = match nul_in_uri(&req).or_else(|| refused_head(&req)) {
        Some(refused) => refused.into_response(),
        None => crate::deadline::run(&state, req, next).await,
    };
    observed.record(&state, &response);
    safety_net(response)
}

/// A head no route reads, answered here for every route: headers over
/// [`MAX_HEADER_BYTES`] (`431 HEADERS_TOO_LARGE`); `Authorization` sent
/// twice (which one would count?): `400` naming the header. (A length
/// given both as `Content-Length` and as `Transfer-Encoding` never reaches
/// here: hyper reads the second and closes the connection after the
/// answer, `serve/listen.rs`.)
fn refused_head(req: &Request) -> Option<ApiError> {
    let headers = req.headers();
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if bytes > MAX_HEADER_BYTES {
        return Some(ApiError::new(
            Code::HeadersTooLarge,
            "the request's headers are over 64 KiB",
        ));
    }
    let times = headers.get_all(AUTHORIZATION).iter().count();
    (times > 1).then(|| ApiError::header_repeated("Authorization", times))
}

/// A NUL character (`%00`) in the path or the query: no id, name or
/// parameter holds one, and PostgreSQL cannot even compare text with one,
/// so it is answered here for every route: `404 NOT_FOUND` in the path
/// (nothing is named so), `422 VALIDATION_ERROR` in the query (as every
/// other bad query parameter, [`crate::extract::ApiQuery`]).
fn nul_in_uri(req: &Request) -> Option<ApiError> {
    // Each `%` (rare) checked for `00` after it: one scan per part.
    let has_nul = |part: &str| {
        let bytes = part.as_bytes();
        memchr::memchr_iter(b'%', bytes).any(|at| bytes[at + 1..].starts_with(b"00"))
    };
    if has_nul(req.uri().path()) {
        return Some(ApiError::not_found("no such resource"));
    }
    if req.uri().query().is_some_and(has_nul) {
        return Some(ApiError::invalid(vec![FieldError::new(
            "query",
            Code::ValidationError,
            "query parameters must not contain a NUL character (%00)",
        )]));
    }
    None
}
