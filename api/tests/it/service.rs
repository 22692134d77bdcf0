//! Service routes, the OpenAPI snapshot and the migration gate.

use crate::common::{Backend, TestApp, TestDb, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};

async fn service_routes_answer(backend: Backend) {
    let t = TestApp::new(backend).await;
    assert_eq!(
        t.call(Method::GET, "/healthz", None, None).await.status,
        StatusCode::OK
    );
    let ready = t.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.status, StatusCode::OK);
    assert_eq!(ready.body["database"], "ok");
    t.call(Method::GET, "/v1/tiers", Some(OPERATOR), None).await;
    let metrics = t.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metrics.status, StatusCode::OK);
    let text = metrics.body.as_str().unwrap_or_default().to_owned();
    assert!(text.contains("matchplane_http_requests_total"), "{text}");
    assert!(text.contains("route=\"/v1/tiers\""), "{text}");
    assert!(
        text.contains("matchplane_http_request_duration_seconds_bucket"),
        "{text}"
    );
    let spec = t.call(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(spec.status, StatusCode::OK);
    assert!(spec.body["paths"]["/v1/projects/{projectId}/game-modes"].is_object());
    let docs = t.call(Method::GET, "/docs/", None, None).await;
    assert_eq!(docs.status, StatusCode::OK);
    assert!(docs.body.as_str().unwrap_or_default().contains("swagger"));
}

async fn api_refuses_a_database_behind(backend: Backend) {
    let owned = TestDb::empty(backend).await;
    let db = owned.connect().await;
    assert_eq!(matchplane_migrations::pending(&db).await.unwrap(), 3);
    let err = matchplane_api::serve::ensure_migrated(&db)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("matchplane migrate"), "{err}");
    matchplane_migrations::migrate(&db).await.unwrap();
    assert_eq!(matchplane_migrations::pending(&db).await.unwrap(), 0);
    matchplane_api::serve::ensure_migrated(&db).await.unwrap();
    // Migrating twice is a no-op.
    matchplane_migrations::migrate(&db).await.unwrap();
}

on_both!(service_routes_answer, api_refuses_a_database_behind);

/// The checked-in `openapi/openapi.json` is what the code generates.
/// Regenerate with `UPDATE_OPENAPI=1 cargo test -p matchplane-api openapi`.
#[test]
fn openapi_snapshot_matches() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../openapi/openapi.json");
    let generated = matchplane_api::openapi().to_pretty_json().unwrap() + "\n";
    if std::env::var("UPDATE_OPENAPI").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "openapi/openapi.json is stale; run UPDATE_OPENAPI=1 cargo test -p matchplane-api openapi"
    );
}
