//! Rotating the operator token (docs/operations.md, "Rotating the operator
//! token"): while `MATCHPLANE_OPERATOR_TOKEN_PREVIOUS` is set, the old
//! token works beside the new one; once it is unset, only the new one.

use crate::common::{Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use matchplane_api::{router, ApiConfig, AppState};
use tower::ServiceExt;

const NEW: &str = "the-new-operator-token";

/// `GET /v1/tiers` (operator only) with `token` on an API configured with
/// `current` and `previous`.
async fn tiers(
    t: &TestApp,
    current: Option<&str>,
    previous: Option<&str>,
    token: &str,
) -> StatusCode {
    let state = AppState::new(
        t.db.clone(),
        ApiConfig {
            operator_token: current.map(str::to_owned),
            operator_token_previous: previous.map(str::to_owned),
            allow_private_webhooks: false,
            recording_key: None,
        },
    );
    let req = Request::get("/v1/tiers")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    router(state).oneshot(req).await.unwrap().status()
}

async fn the_previous_token_works_only_while_it_is_set(backend: Backend) {
    let t = TestApp::new(backend).await;
    // During the rotation: both.
    assert_eq!(
        tiers(&t, Some(NEW), Some(OPERATOR), NEW).await,
        StatusCode::OK
    );
    assert_eq!(
        tiers(&t, Some(NEW), Some(OPERATOR), OPERATOR).await,
        StatusCode::OK
    );
    assert_eq!(
        tiers(&t, Some(NEW), Some(OPERATOR), "another-token").await,
        StatusCode::UNAUTHORIZED
    );
    // After it: the new one only.
    assert_eq!(tiers(&t, Some(NEW), None, NEW).await, StatusCode::OK);
    assert_eq!(
        tiers(&t, Some(NEW), None, OPERATOR).await,
        StatusCode::UNAUTHORIZED
    );
    // A previous token alone opens nothing: without a current one the
    // operator routes stay closed.
    assert_eq!(
        tiers(&t, None, Some(OPERATOR), OPERATOR).await,
        StatusCode::UNAUTHORIZED
    );
}

on_both!(the_previous_token_works_only_while_it_is_set);
