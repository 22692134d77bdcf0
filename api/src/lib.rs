//! # matchplane-api: the control-plane REST API (docs/api-keys.md, docs/game-modes.md, docs/api-tour.md)
//!
//! An axum router over the store: tiers and projects (operator), API keys,
//! game modes (create, list, get, replace, delete, history, rotate secret),
//! and the service routes `/healthz`, `/readyz`, `/metrics`,
//! `/openapi.json`, `/docs`.
//!
//! - [`router`] builds the app for a state ([`AppState`]); [`serve_on`] runs it.
//! - Every error is a [`problem::ApiError`] answered as
//!   `application/problem+json`; a safety net turns any other error answer
//!   (axum's own 405, a panic) into one too.
//! - A webhook URL is checked with `matchplane-webhook`'s one address
//!   policy (`matchplane_webhook::ssrf`), which the worker applies again at
//!   every delivery.

pub mod auth;
pub mod body_errors;
pub mod cache;
pub mod console;
pub mod credentials;
pub mod deadline;
pub mod edge;
pub mod extract;
pub mod idempotency;
pub mod key_usage;
pub mod observe;
pub mod openapi;
pub mod params;
pub mod play;
pub mod preconditions;
pub mod problem;
pub mod rate_limit;
pub mod recording;
pub mod routes;
pub mod scopes;
pub mod serve;
pub mod state;
/// Strict JSON reading (a key given twice refused), in the core so that
/// the simulator's CSV cells are read by it too.
pub use matchplane_matchmaker::strict_json;

pub use serve::{serve_on, ConnectionLimits, ServeConfig, ServeError};
pub use state::{ApiConfig, AppState};

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::Router;
use problem::ApiError;
use routes::{
    api_keys, game_mode_history, game_modes, players, projects, ratings, search_ws, searches,
    service, tickets, tiers,
};
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use utoipa_swagger_ui::SwaggerUi;

/// Every documented route, registered with its OpenAPI description. The
/// creating routes honour `Idempotency-Key` ([`idempotency::on`]: its layer
/// given the `state`; only documented without one).
fn api_routes(state: Option<&AppState>) -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(service::healthz))
        .routes(routes!(service::readyz))
        .routes(routes!(service::metrics))
        .routes(routes!(tiers::list))
        .routes(routes!(tiers::get, tiers::put, tiers::delete))
        .routes(idempotency::on_operator(
            routes!(projects::create, projects::list),
            state,
        ))
        .routes(routes!(projects::get, projects::update, projects::delete))
        .routes(routes!(
            crate::routes::project_settings::get,
            crate::routes::project_settings::update
        ))
        .routes(routes!(
            crate::routes::project_webhook::get,
            crate::routes::project_webhook::put,
            crate::routes::project_webhook::delete
        ))
        .routes(routes!(crate::routes::project_webhook::rotate_secret))
        .routes(idempotency::on(
            routes!(api_keys::create, api_keys::list),
            state,
        ))
        .routes(routes!(api_keys::revoke))
        .routes(routes!(game_modes::create, game_modes::list))
        .routes(routes!(
            game_modes::get,
            game_modes::replace,
            game_mode_history::delete
        ))
        .routes(routes!(game_mode_history::versions))
        .routes(routes!(game_modes::rotate_secret))
        .routes(routes!(crate::routes::webhook_test::test))
        .routes(routes!(crate::routes::deliveries::of_mode))
        .routes(routes!(
            crate::routes::mode_hold::hold,
            crate::routes::mode_hold::release
        ))
        .routes(routes!(crate::routes::mode_stats::stats))
        .routes(routes!(crate::routes::mode_stats_history::history))
        .routes(routes!(crate::routes::mode_pool::pool))
        .merge(simulate_routes())
        .routes(routes!(crate::routes::preview::preview))
        .routes(routes!(crate::routes::replay::replay_mode))
        .routes(routes!(crate::routes::recording::recording))
        .routes(routes!(crate::routes::matches::list))
        .routes(routes!(crate::routes::matches::get))
        .routes(idempotency::on(
            routes!(crate::routes::match_lifecycle::release),
            state,
        ))
        .routes(idempotency::on(
            routes!(crate::routes::match_lifecycle::assign),
            state,
        ))
        .routes(idempotency::on(
            routes!(crate::routes::backfills::open),
            state,
        ))
        .routes(routes!(crate::routes::backfills::list::list))
        .routes(routes!(
            crate::routes::backfills::get,
            crate::routes::backfills::replace,
            crate::routes::backfills::close
        ))
        .routes(routes!(crate::routes::deliveries::list))
        .routes(routes!(crate::routes::deliveries::redeliver))
        .routes(idempotency::on(routes!(ratings::report_result), state))
        .routes(routes!(ratings::get_rating, ratings::put_rating))
        .routes(routes!(ratings::leaderboard))
        .routes(idempotency::on(routes!(tickets::create), state))
        .routes(routes!(tickets::get, tickets::cancel))
        .routes(routes!(players::end_player_searches))
        .routes(routes!(players::erase_player))
        .routes(routes!(crate::routes::party_searches::end_party_searches))
        .routes(routes!(tickets::accept))
        .routes(routes!(tickets::decline))
        .routes(routes!(search_ws::search))
        .routes(routes!(searches::create))
        .routes(routes!(searches::get, searches::cancel))
        .routes(routes!(searches::accept))
        .routes(routes!(searches::decline))
}

/// `POST …/simulate`, whose body may be far larger than other routes' (a
/// scenario of up to 200 000 arrivals).
fn simulate_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(crate::routes::simulate::simulate))
        .layer(DefaultBodyLimit::max(
            crate::routes::simulate::MAX_SIMULATE_BODY_BYTES,
        ))
}

/// The OpenAPI document generated from the handlers (served at `/openapi.json`).
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut spec = api_routes(None).split_for_parts().1;
    document(&mut spec);
    openapi::finish(&mut spec);
    spec
}

/// What the handlers' annotations leave to a shared table: the scopes'
/// `403`s (the common errors are added by [`openapi::finish`], which runs
/// next; the `Idempotency-Key` header is documented on its routes by
/// [`idempotency::on`]).
fn document(spec: &mut utoipa::openapi::OpenApi) {
    scopes::document(spec);
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}

fn panic_problem(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::internal(&"a handler panicked").into_response()
}

/// The whole app: documented routes, `/openapi.json`, `/docs`, the console
/// (`/console/`, [`console`]), 404/405
/// problems, 64 KiB body limit, request metrics.
pub fn router(state: AppState) -> Router {
    state.play.recorder.attach(
        state.db.clone(),
        state.config.recording_key.as_deref(),
        &state.recorder,
    );
    state.play.ends.attach(&state.recorder);
    let (routes, mut spec) = api_routes(Some(&state)).split_for_parts();
    document(&mut spec);
    openapi::finish(&mut spec);
    let query_names = std::sync::Arc::new(extract::QueryNames::of(&spec));
    let routes = routes
        .route_layer(extract::refuse_unknown_query(query_names))
        .merge(docs_ui(spec))
        .merge(console::routes())
        .fallback(not_found);
    layered(routes, state.clone()).with_state(state)
}

/// `/docs/`: Swagger UI over the OpenAPI document (and the document at
/// `/openapi.json`). Its page runs inline scripts, so it gets no script
/// policy as the console does; it is kept out of other sites' frames and
/// its files are never sniffed for another type.
fn docs_ui(spec: utoipa::openapi::OpenApi) -> Router<AppState> {
    use axum::http::header::{
        CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
    };
    use axum::http::{HeaderName, HeaderValue};
    use tower_http::set_header::SetResponseHeaderLayer;
    let set = |name: HeaderName, value: &'static str| {
        SetResponseHeaderLayer::overriding(name, HeaderValue::from_static(value))
    };
    let headers = tower::ServiceBuilder::new()
        .layer(set(X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(set(X_FRAME_OPTIONS, "DENY"))
        .layer(set(
            CONTENT_SECURITY_POLICY,
            "frame-ancestors 'none'; base-uri 'none'",
        ))
        .layer(set(REFERRER_POLICY, "no-referrer"));
    Router::from(SwaggerUi::new("/docs").url("/openapi.json", spec)).layer(headers)
}

/// What every route goes through, innermost first (after its own layers,
/// such as [`idempotency::on`]'s): a panic becomes a `500` problem, and
/// the edge ([`edge`]: the request deadline's `503` ([`deadline`]),
/// metrics, log line, problem safety net) sees and counts every answer;
/// the 64 KiB body limit around all.
///
/// The three are one stack given to one `layer` call (outermost first):
/// each `Router::layer` wraps every route in a boxed service of its own,
/// and a request clones every boxed service under the one it enters, so
/// three calls cost a request about twice the clones and boxed futures of
/// one (the ticket route's profile, docs/performance.md).
fn layered(routes: Router<AppState>, state: AppState) -> Router<AppState> {
    routes.layer(
        tower::ServiceBuilder::new()
            .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES))
            .layer(middleware::from_fn_with_state(state, edge::edge))
            .layer(CatchPanicLayer::custom(panic_problem)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::PROBLEM_JSON;
    use axum::body::Body;
    use axum::http::{header, Request, StatusCode};
    use axum::routing::get;
    use matchplane_store::db::connect;
    use tower::ServiceExt;

    #[tokio::test]
    async fn a_panicking_handler_answers_a_counted_500_problem() {
        let db = connect("sqlite::memory:").await.unwrap();
        let state = AppState::new(db, ApiConfig::default());
        let boom = Router::new().route(
            "/boom",
            get(|| async {
                if true {
                    panic!("boom");
                }
                ""
            }),
        );
        let app = layered(boom, state.clone()).with_state(state.clone());
        let response = app
            .oneshot(Request::get("/boom").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[header::CONTENT_TYPE], PROBLEM_JSON);
        let text = state.metrics.render();
        let line = r#"matchplane_http_requests_total{method="GET",route="/boom",status="500"} 1"#;
        assert!(text.lines().any(|l| l == line), "{text}");
    }
}
