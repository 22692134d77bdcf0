//! The limit on simulations running at once, through the route: a
//! project's third simulation while two run is `429 RATE_LIMITED` with
//! `Retry-After`, and a place is free again once they end.

use crate::rate_limit::SIMULATIONS_PER_PROJECT;
use crate::state::{ApiConfig, AppState};
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

async fn app() -> Router {
    let db = matchplane_store::db::connect("sqlite::memory:")
        .await
        .unwrap();
    let config = ApiConfig {
        operator_token: Some("op".into()),
        operator_token_previous: None,
        ..ApiConfig::default()
    };
    crate::router(AppState::new(db, config))
}

/// `scenario` posted to `project`'s simulate route: the status, the
/// `Retry-After` header and the JSON answer.
async fn simulate(
    app: &Router,
    project: &str,
    scenario: &Value,
) -> (StatusCode, Option<String>, Value) {
    let response = app
        .clone()
        .oneshot(
            Request::post(format!("/v1/projects/{project}/simulate"))
                .header(header::AUTHORIZATION, "Bearer op")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(scenario.to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .map(|v| v.to_str().unwrap().to_owned());
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, retry_after, serde_json::from_slice(&body).unwrap())
}

/// A duel where nobody matches (tolerance 0, every MMR apart): `players`
/// waiting from the start, one cycle a second until `until`.
fn crowded_duel(players: u32, until: u64) -> Value {
    let arrivals: Vec<Value> = (0..players)
        .map(|i| json!({"at": 0.0, "playerId": format!("p{i}"), "mmr": i}))
        .collect();
    super::tests::duel(until, arrivals)
}

/// `SIMULATIONS_PER_PROJECT + 1` simulations of about half a second each
/// (in a debug build) posted at once: all run but one, refused at once;
/// once they have ended, the project runs one again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_past_its_simulations_at_once_is_429_until_one_ends() {
    let _alone = super::tests::HEAVY.lock().await;
    let app = app().await;
    let slow = crowded_duel(1000, 300);
    let answers = futures::future::join_all(
        (0..=SIMULATIONS_PER_PROJECT).map(|_| simulate(&app, "prj_a", &slow)),
    )
    .await;
    let statuses: Vec<StatusCode> = answers.iter().map(|a| a.0).collect();
    let ran: Vec<&Value> = answers
        .iter()
        .filter(|a| a.0 == StatusCode::OK)
        .map(|a| &a.2)
        .collect();
    assert_eq!(ran.len(), SIMULATIONS_PER_PROJECT, "{statuses:?}");
    for report in ran {
        assert_eq!(report["stats"]["stillWaiting"], 1000, "{report}");
    }
    let (status, retry_after, problem) = answers.iter().find(|a| a.0 != StatusCode::OK).unwrap();
    assert_eq!(*status, StatusCode::TOO_MANY_REQUESTS, "{problem}");
    assert_eq!(problem["code"], "RATE_LIMITED", "{problem}");
    assert_eq!(retry_after.as_deref(), Some("1"));
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "limited to {SIMULATIONS_PER_PROJECT} at a time per project"
        )),
        "{detail}"
    );

    // The refusal is counted by its limit.
    let metrics = app
        .clone()
        .oneshot(Request::get("/metrics").body(Body::empty()).unwrap())
        .await
        .unwrap();
    let metrics = axum::body::to_bytes(metrics.into_body(), usize::MAX)
        .await
        .unwrap();
    let metrics = String::from_utf8_lossy(&metrics);
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("matchplane_rate_limited_total{limit=\"simulations\"} 1")),
        "{metrics}"
    );

    let (status, _, report) = simulate(&app, "prj_a", &slow).await;
    assert_eq!(status, StatusCode::OK, "{report}");
}
