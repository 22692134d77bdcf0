//! What every request goes through, as one middleware: its metrics and log
//! line ([`crate::observe`]), the refusal of a NUL in the URI (but in a
//! mode name or a player id, [`nul_in_uri`]) and of a
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
use axum::extract::{MatchedPath, Request, State};
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
/// so it is answered here: `404 NOT_FOUND` in the path (nothing is named
/// so), `422 VALIDATION_ERROR` in the query (as every other bad query
/// parameter, [`crate::extract::ApiQuery`]). A NUL in a route's mode name
/// or player id goes on to the route, which answers it as any other
/// control character there (`404 GAME_MODE_NOT_FOUND` for a mode, `422`
/// for a player id to erase): the store asks nothing for such a name
/// ([`NUL_SAFE_PARAMETERS`]).
fn nul_in_uri(req: &Request) -> Option<ApiError> {
    // Each `%` (rare) checked for `00` after it: one scan per part.
    let has_nul = |part: &str| {
        let bytes = part.as_bytes();
        memchr::memchr_iter(b'%', bytes).any(|at| bytes[at + 1..].starts_with(b"00"))
    };
    let path = req.uri().path();
    if has_nul(path) && !only_in_safe_parameters(req, path, has_nul) {
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

/// The path parameters whose routes take a NUL as any other control
/// character: the store never queries with one (`game_modes::get`,
/// `ratings::get`) and player ids are checked before anything is read.
const NUL_SAFE_PARAMETERS: [&str; 2] = ["{name}", "{playerId}"];

/// Whether every segment of `path` that holds a NUL is, in the route the
/// request matched, one of [`NUL_SAFE_PARAMETERS`].
fn only_in_safe_parameters(req: &Request, path: &str, has_nul: impl Fn(&str) -> bool) -> bool {
    let Some(route) = req.extensions().get::<MatchedPath>() else {
        return false;
    };
    let (route, path) = (route.as_str().split('/'), path.split('/'));
    route.clone().count() == path.clone().count()
        && route
            .zip(path)
            .all(|(template, segment)| !has_nul(segment) || NUL_SAFE_PARAMETERS.contains(&template))
}
