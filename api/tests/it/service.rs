//! Service routes, the OpenAPI snapshot and the migration gate.

use crate::common::{empty_database, Backend, TestApp, OPERATOR};
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
    // In-process pools: readiness says so, and claims nothing of Redis.
    assert_eq!(ready.body["liveStore"], "in-process", "{}", ready.body);
    assert!(ready.body.get("redis").is_none(), "{}", ready.body);
    t.call(Method::GET, "/v1/tiers", Some(OPERATOR), None).await;
    t.call(Method::GET, "/v1/tiers", Some(OPERATOR), None).await;
    t.call(Method::GET, "/v1/tiers/nope", Some(OPERATOR), None)
        .await;
    let metrics = t.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metrics.status, StatusCode::OK);
    let text = metrics.body.as_str().unwrap_or_default().to_owned();
    // Handles are registered once and reused: both calls count on one
    // series; another status of the same route is its own series.
    for line in [
        r#"matchplane_http_requests_total{method="GET",route="/v1/tiers",status="200"} 2"#,
        r#"matchplane_http_requests_total{method="GET",route="/v1/tiers/{tier}",status="404"} 1"#,
        r#"matchplane_http_request_duration_seconds_count{method="GET",route="/v1/tiers"} 2"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in {text}");
    }
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
    // Kept out of other sites' frames, never sniffed for another type.
    assert_eq!(docs.headers["x-content-type-options"], "nosniff");
    assert_eq!(docs.headers["x-frame-options"], "DENY");
    let csp = docs.headers["content-security-policy"]
        .to_str()
        .unwrap_or_default();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
}

async fn api_refuses_a_database_behind(backend: Backend) {
    let owned = empty_database(backend).await;
    let db = owned.connect().await;
    let behind = matchplane_migrations::pending(&db).await.unwrap();
    assert!(behind >= 3, "an empty database lacks every migration");
    let err = matchplane_store::db::ensure_migrated(&db)
        .await
        .unwrap_err();
    assert!(matches!(err, matchplane_store::db::SchemaError::MigrationsBehind(n) if n == behind));
    assert!(err.to_string().contains("matchplane migrate"), "{err}");
    matchplane_migrations::migrate(&db).await.unwrap();
    assert_eq!(matchplane_migrations::pending(&db).await.unwrap(), 0);
    matchplane_store::db::ensure_migrated(&db).await.unwrap();
    // Migrating twice is a no-op.
    matchplane_migrations::migrate(&db).await.unwrap();
}

/// `serve_on` (what the binary runs) over in-process pools on a real socket
/// (port 0), until the returned sender fires: the address, that sender and
/// the server's task.
async fn spawn_serve_on(
    db: sea_orm::DatabaseConnection,
    config: matchplane_api::ServeConfig,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), matchplane_api::ServeError>>,
) {
    use matchplane_api::play::{Play, PlaySettings};
    let play = std::sync::Arc::new(Play::in_memory(PlaySettings::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(matchplane_api::serve_on(
        db,
        config,
        play,
        listener,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, stop, server)
}

/// `serve_on` on a real socket (port 0): refuses a database behind, serves
/// once migrated, and returns when the shutdown future completes.
async fn serve_on_port_0_until_shutdown(backend: Backend) {
    use matchplane_api::{ApiConfig, ServeConfig, ServeError};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let owned = empty_database(backend).await;
    let config = ServeConfig {
        api: ApiConfig::default(),
        worker_metrics: None,
        ..ServeConfig::default()
    };
    let (_, _stop, refused) = spawn_serve_on(owned.connect().await, config.clone()).await;
    let refused = refused.await.unwrap();
    assert!(
        matches!(refused, Err(ServeError::MigrationsBehind(n)) if n >= 3),
        "{refused:?}"
    );

    matchplane_migrations::migrate(&owned.connect().await)
        .await
        .unwrap();
    let (addr, stop, server) = spawn_serve_on(owned.connect().await, config).await;
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"database\":\"ok\""), "{answer}");
    stop.send(()).unwrap();
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), server).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}

/// A failure on our side is a 500 `INTERNAL` problem that says nothing of
/// its cause, and `/readyz` reports the database unreachable.
async fn internal_errors_leak_nothing(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    t.db.clone().close().await.unwrap();
    let answer = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}"),
            Some(OPERATOR),
            None,
        )
        .await;
    answer.assert_problem(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL");
    let text = answer.body.to_string().to_lowercase();
    for internal in ["pool", "sqlx", "sql", "closed", "database", "connection"] {
        assert!(!text.contains(internal), "{internal} leaked: {text}");
    }
    // A cached key still authenticates; the store failure is still a 500.
    t.call(
        Method::GET,
        &format!("/v1/projects/{p}/game-modes"),
        Some(&key),
        None,
    )
    .await
    .assert_problem(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL");
    // Degraded: the live store still answers.
    let ready = t.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.status, StatusCode::OK);
    assert_eq!(ready.body["status"], "degraded");
    assert_eq!(ready.body["database"], "unreachable");
}

on_both!(
    internal_errors_leak_nothing,
    service_routes_answer,
    api_refuses_a_database_behind,
    serve_on_port_0_until_shutdown
);

/// `matchplane dev`'s wiring: the worker records into the process-wide
/// recorder (`matchplane_worker::metrics::install`), whose handle is given to
/// the API; the API's `GET /metrics`, on a real socket, serves the worker's
/// figures after its own. The only test of this binary that installs the
/// process-wide recorder (the API's own metrics use a per-router recorder).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_metrics_include_the_workers() {
    use matchplane_api::{ApiConfig, ServeConfig};
    use matchplane_store::pool::ModeKey;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let owned = empty_database(Backend::Postgres).await;
    matchplane_migrations::migrate(&owned.connect().await)
        .await
        .unwrap();
    let handle = matchplane_worker::metrics::install().unwrap();
    // What the in-process worker records during a cycle and a delivery.
    let mode = ModeKey::new("prj_dev", "duel");
    matchplane_worker::metrics::cycle(&mode, std::time::Duration::from_millis(12), 7, 6);
    matchplane_worker::metrics::matched(&mode, [1.5, 2.5].into_iter());
    matchplane_worker::metrics::attempt(
        Some(200),
        std::time::Duration::from_millis(30),
        Some("succeeded"),
    );

    let config = ServeConfig {
        api: ApiConfig::default(),
        worker_metrics: Some(handle),
        ..ServeConfig::default()
    };
    let (addr, stop, server) = spawn_serve_on(owned.connect().await, config).await;
    let get = |path: &'static str| async move {
        let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).await.unwrap();
        answer
    };
    assert!(get("/healthz").await.starts_with("HTTP/1.1 200"));
    let text = get("/metrics").await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    for expected in [
        "matchplane_http_requests_total",
        r#"matchplane_cycle_duration_seconds_count{project="prj_dev",mode="duel"} 1"#,
        r#"matchplane_pool_size{project="prj_dev",mode="duel"} 7"#,
        r#"matchplane_cycle_candidates{project="prj_dev",mode="duel"} 6"#,
        r#"matchplane_matches_total{project="prj_dev",mode="duel"} 1"#,
        r#"matchplane_webhook_deliveries_total{outcome="succeeded"} 1"#,
    ] {
        assert!(text.contains(expected), "{expected} missing from:\n{text}");
    }
    stop.send(()).unwrap();
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), server).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}

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
