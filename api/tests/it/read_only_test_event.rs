//! A webhook test on a read-only database (a failover in progress): the
//! event is sent, so the route answers its attempt, though the attempt
//! cannot be logged (docs/webhook-events.md, `webhook.test`). Before, it
//! sent the event and answered `503`, and a caller retrying the refusal
//! sent a second one.

use crate::common::{mode, Backend, TestApp};
use axum::http::{Method, StatusCode};
use sea_orm::{ConnectionTrait, Database};
use serde_json::json;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn a_test_event_sent_on_a_read_only_database_is_answered() {
    let t = TestApp::with_config(Backend::Postgres, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let sent: Arc<Mutex<u32>> = Arc::default();
    let counted = Arc::clone(&sent);
    let hook = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            *counted.lock().unwrap() += 1;
            async { "thanks" }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, hook).await });
    let mut body = mode("duel");
    body["webhook"]["url"] = json!(format!("http://{addr}/hook"));
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    // The database takes reads only, on every connection from now on.
    let admin = Database::connect(matchplane_store::test_support::database_url())
        .await
        .unwrap();
    let name = t.database_name();
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" SET default_transaction_read_only = on"
        ))
        .await
        .unwrap();
    admin
        .execute_unprepared(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .await
        .unwrap();
    admin.close().await.ok();

    let tested = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes/duel/webhook/test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.body);
    assert_eq!(tested.body["delivered"], true, "{}", tested.body);
    assert_eq!(*sent.lock().unwrap(), 1);
}
