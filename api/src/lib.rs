//! # matchplane-api: the control-plane REST API (SPEC 2, 3, 7)
//!
//! An axum router over the store: tiers and projects (operator), API keys,
//! game modes (create, list, get, replace, delete, history, rotate secret),
//! and the service routes `/healthz`, `/readyz`, `/metrics`,
//! `/openapi.json`, `/docs`.
//!
//! - [`router`] builds the app for a state ([`AppState`]); [`serve`] runs it.
//! - Every error is a [`problem::ApiError`] answered as
//!   `application/problem+json`; a safety net turns any other error answer
//!   (axum's own 405, a panic) into one too.
//! - [`ssrf`] is the webhook address policy, shared with the worker.

pub mod auth;
pub mod credentials;
pub mod extract;
pub mod observe;
pub mod openapi;
pub mod play;
pub mod problem;
pub mod rate_limit;
pub mod routes;
pub mod serve;
pub mod ssrf;
pub mod state;

pub use serve::{serve, serve_with_play, ServeConfig, ServeError};
pub use state::{ApiConfig, AppState};

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use matchplane_matchmaker::Code;
use problem::{ApiError, PROBLEM_JSON};
use routes::{
    api_keys, game_modes, projects, ratings, search_ws, searches, service, tickets, tiers,
};
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use utoipa_swagger_ui::SwaggerUi;

/// Every documented route, registered with its OpenAPI description.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(service::healthz))
        .routes(routes!(service::readyz))
        .routes(routes!(service::metrics))
        .routes(routes!(tiers::list))
        .routes(routes!(tiers::get, tiers::put))
        .routes(routes!(projects::create, projects::list))
        .routes(routes!(projects::get, projects::update, projects::delete))
        .routes(routes!(api_keys::create, api_keys::list))
        .routes(routes!(api_keys::revoke))
        .routes(routes!(game_modes::create, game_modes::list))
        .routes(routes!(
            game_modes::get,
            game_modes::replace,
            game_modes::delete
        ))
        .routes(routes!(game_modes::versions))
        .routes(routes!(game_modes::rotate_secret))
        .routes(routes!(crate::routes::webhook_test::test))
        .routes(routes!(crate::routes::deliveries::of_mode))
        .routes(routes!(crate::routes::mode_stats::stats))
        .routes(routes!(crate::routes::matches::list))
        .routes(routes!(crate::routes::matches::get))
        .routes(routes!(crate::routes::deliveries::list))
        .routes(routes!(crate::routes::deliveries::redeliver))
        .routes(routes!(ratings::report_result))
        .routes(routes!(ratings::get_rating, ratings::put_rating))
        .routes(routes!(ratings::leaderboard))
        .routes(routes!(tickets::create))
        .routes(routes!(tickets::get, tickets::cancel))
        .routes(routes!(tickets::end_player_searches))
        .routes(routes!(search_ws::search))
        .routes(routes!(searches::create))
        .routes(routes!(searches::get, searches::cancel))
}

/// The OpenAPI document generated from the handlers (served at `/openapi.json`).
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut spec = api_routes().split_for_parts().1;
    openapi::document_common_errors(&mut spec);
    spec
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}

/// Turns any error answer that is not already a problem (axum's 405, a
/// body-limit 413, an extractor's plain-text rejection) into one.
async fn problem_safety_net(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == PROBLEM_JSON.as_bytes());
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return response;
    }
    let (code, detail) = match status {
        StatusCode::BAD_REQUEST => (Code::ValidationError.as_str(), "the request is malformed"),
        StatusCode::UNAUTHORIZED => (Code::Unauthorized.as_str(), "invalid credentials"),
        StatusCode::NOT_FOUND => (Code::NotFound.as_str(), "no such resource"),
        StatusCode::METHOD_NOT_ALLOWED => (
            "METHOD_NOT_ALLOWED",
            "this route does not accept that method",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => {
            (Code::PayloadTooLarge.as_str(), "the body is over 64 KiB")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (Code::UnsupportedMediaType.as_str(), "the body must be JSON")
        }
        StatusCode::TOO_MANY_REQUESTS => (Code::RateLimited.as_str(), "too many requests"),
        s if s.is_server_error() => (Code::Internal.as_str(), "something failed on our side"),
        _ => (Code::ValidationError.as_str(), "the request was refused"),
    };
    let allow = response.headers().get(header::ALLOW).cloned();
    let mut problem = ApiError::with_status(status, code, detail).into_response();
    if let Some(allow) = allow {
        problem.headers_mut().insert(header::ALLOW, allow);
    }
    problem
}

fn panic_problem(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::internal(&"a handler panicked").into_response()
}

/// The whole app: documented routes, `/openapi.json`, `/docs`, 404/405
/// problems, 64 KiB body limit, request metrics.
pub fn router(state: AppState) -> Router {
    let (routes, mut spec) = api_routes().split_for_parts();
    openapi::document_common_errors(&mut spec);
    routes
        .merge(SwaggerUi::new("/docs").url("/openapi.json", spec))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            play::cache::invalidate_on_change,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            observe::track,
        ))
        .layer(middleware::from_fn(problem_safety_net))
        .layer(CatchPanicLayer::custom(panic_problem))
        .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES))
        .with_state(state)
}

/// `Content-Type` of problem answers, for clients and tests.
pub fn problem_content_type() -> HeaderValue {
    HeaderValue::from_static(PROBLEM_JSON)
}
