//! Test harness: a fresh database per test (PostgreSQL `mp_t_<random>`, or a
//! temp SQLite file), migrated, and the router driven with `oneshot`.
#![allow(dead_code)]

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use matchplane_api::{router, ApiConfig, AppState};
use sea_orm::DatabaseConnection;
use serde_json::{json, Value};
use tower::ServiceExt;

/// The operator token of every test app.
pub const OPERATOR: &str = "test-operator-token";

/// Which database a test runs on.
#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// Runs each listed async test fn once on PostgreSQL and once on SQLite.
#[macro_export]
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn postgres() {
                super::$name($crate::common::Backend::Postgres).await
            }
            #[tokio::test]
            async fn sqlite() {
                super::$name($crate::common::Backend::Sqlite).await
            }
        }
    )*};
}

pub use matchplane_store::test_support::TestDatabase;

/// An empty database (no migrations) on `backend`, owned by one test:
/// dropped (or deleted) when the test ends.
pub async fn empty_database(backend: Backend) -> TestDatabase {
    match backend {
        Backend::Postgres => TestDatabase::create("mp_t_").await,
        Backend::Sqlite => TestDatabase::sqlite("mp_t_"),
    }
}

/// A migrated database and a router over it.
pub struct TestApp {
    pub app: Router,
    pub db: DatabaseConnection,
    _owned: TestDatabase,
}

/// A response, its headers and its JSON body (`Value::Null` when empty,
/// a string when not JSON).
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    /// The problem `code`, if any.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// Asserts an error answer is a docs/error-codes.md problem with `status` and `code`.
    pub fn assert_problem(&self, status: StatusCode, code: &str) {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.code(), code, "body: {}", self.body);
        assert_eq!(
            self.headers.get(header::CONTENT_TYPE).unwrap(),
            "application/problem+json"
        );
        for member in ["type", "title", "status", "code", "detail", "errors"] {
            assert!(
                self.body.get(member).is_some(),
                "missing {member}: {}",
                self.body
            );
        }
        assert_eq!(self.body["status"], status.as_u16());
    }

    /// The `code`s of the `errors` list.
    pub fn error_codes(&self) -> Vec<String> {
        self.body["errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["code"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl TestApp {
    /// A fresh migrated app on `backend`.
    pub async fn new(backend: Backend) -> Self {
        Self::with_config(backend, false).await
    }

    /// A fresh migrated app; `allow_private` as `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS`.
    pub async fn with_config(backend: Backend, allow_private: bool) -> Self {
        let owned = empty_database(backend).await;
        let db = owned.connect().await;
        matchplane_migrations::migrate(&db).await.expect("migrate");
        let state = AppState::new(
            db.clone(),
            ApiConfig {
                operator_token: Some(OPERATOR.to_owned()),
                operator_token_previous: None,
                allow_private_webhooks: allow_private,
                recording_key: None,
            },
        );
        Self {
            app: router(state),
            db,
            _owned: owned,
        }
    }

    /// The name of the test's database.
    pub fn database_name(&self) -> &str {
        self._owned.name()
    }

    /// Sends a raw request.
    pub async fn send(&self, req: Request<Body>) -> Answer {
        let response = self.app.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        Answer {
            status,
            headers,
            body,
        }
    }

    /// Sends `method path` with an optional bearer token and JSON body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Answer {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(token) = token {
            req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let req = match body {
            Some(body) => req
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(serde_json::to_vec(&body).unwrap())),
            None => req.body(Body::empty()),
        };
        self.send(req.unwrap()).await
    }

    /// Creates a project on `tier` as the operator; returns its id.
    pub async fn project(&self, tier: &str) -> String {
        let a = self
            .call(
                Method::POST,
                "/v1/projects",
                Some(OPERATOR),
                Some(json!({"name": "Studio", "tier": tier})),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        a.body["id"].as_str().unwrap().to_owned()
    }

    /// Creates an API key of `project` as the operator; returns (key id, key).
    pub async fn key(&self, project: &str) -> (String, String) {
        let a = self
            .call(
                Method::POST,
                &format!("/v1/projects/{project}/keys"),
                Some(OPERATOR),
                Some(json!({"name": "backend"})),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        (
            a.body["id"].as_str().unwrap().to_owned(),
            a.body["key"].as_str().unwrap().to_owned(),
        )
    }
}

/// A valid game mode for every seeded tier (free included).
pub fn mode(name: &str) -> Value {
    json!({
        "name": name,
        "enabled": true,
        "matchShape": [2, 2],
        "matchmakingCycleDurationSeconds": 5,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
        "teamAssignment": "balanced",
        "parties": {"allowParties": true, "maxSize": 2, "keepTogether": true},
        "ticketTtlSeconds": 600,
        "webhook": {"url": "https://93.184.216.34/hooks/match", "enabled": true}
    })
}
