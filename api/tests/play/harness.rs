//! Test harness: a fresh PostgreSQL database, a pool backend (Redis under a
//! random prefix, or memory), the router driven with `oneshot`, and a real
//! server on port 0 for WebSocket clients.
#![allow(dead_code)]

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use matchplane_api::play::{self, Play, PlaySettings};
use matchplane_api::{router, ApiConfig, AppState};
use matchplane_store::pool::{Claim, ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore};
use matchplane_store::test_support::TestDatabase;
use matchplane_worker::sweep::{SweepReport, Sweeper};
use sea_orm::DatabaseConnection;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

/// The operator token of every test app.
pub const OPERATOR: &str = "test-operator-token";
/// The recording key of every API instance of these tests (and of the
/// workers that record, so their hashes link).
pub const RECORDING_KEY: &str = "test-recording-key";

/// Which live stores a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pools {
    Redis,
    Memory,
}

/// Runs each listed `async fn(Pools)` on Redis and on memory.
#[macro_export]
macro_rules! on_both_pools {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                super::$name($crate::harness::Pools::Redis).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory() {
                super::$name($crate::harness::Pools::Memory).await
            }
        }
    )*};
}

pub fn redis_url() -> String {
    matchplane_store::test_support::redis_url()
}

/// An answer: status, headers and JSON body (`Null` when empty).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Value,
}

impl Answer {
    /// Asserts a problem with `status` and `code`.
    pub fn assert_problem(&self, status: StatusCode, code: &str) {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.body["code"], code, "body: {}", self.body);
    }
}

/// A migrated database, live stores and a router over them.
pub struct TestApp {
    pub app: Router,
    pub db: DatabaseConnection,
    pub play: Arc<Play>,
    pub pools: Pools,
    /// The Redis prefix (Redis runs only).
    pub prefix: String,
    _db: TestDatabase,
}

impl Drop for TestApp {
    /// Leaves nothing of this test in Redis.
    fn drop(&mut self) {
        if self.pools == Pools::Redis {
            let _ =
                matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &self.prefix);
        }
    }
}

/// Fast timings for tests: 1 s REST poll timeout, 100 ms pings, a 3 s
/// pong timeout, a 5 s socket lease.
pub fn fast() -> PlaySettings {
    PlaySettings {
        rest_poll_timeout: Duration::from_secs(1),
        ping_interval: Duration::from_millis(100),
        pong_timeout: Duration::from_secs(3),
        socket_lease: Duration::from_secs(5),
    }
}

/// [`fast`] with a 1 s socket lease, for the tests of its renewal and lapse.
pub fn short_lease() -> PlaySettings {
    PlaySettings {
        socket_lease: Duration::from_secs(1),
        ..fast()
    }
}

impl TestApp {
    /// A fresh app on `pools` with `settings`.
    pub async fn new(pools: Pools, settings: PlaySettings) -> Self {
        Self::build(pools, settings, false).await
    }

    /// [`TestApp::new`] accepting webhook URLs on loopback (a receiver in
    /// the test), as `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS` does.
    pub async fn allowing_private_webhooks(pools: Pools, settings: PlaySettings) -> Self {
        Self::build(pools, settings, true).await
    }

    async fn build(pools: Pools, settings: PlaySettings, allow_private_webhooks: bool) -> Self {
        let owned = TestDatabase::create("mp_t_").await;
        let db = owned.connect().await;
        matchplane_migrations::migrate(&db).await.expect("migrate");
        let prefix = format!("mpt_{}", ulid::Ulid::new());
        let play = Arc::new(Self::play_on(pools, &prefix, settings).await);
        let state = AppState::new(
            db.clone(),
            ApiConfig {
                operator_token: Some(OPERATOR.to_owned()),
                operator_token_previous: None,
                allow_private_webhooks,
                recording_key: Some(RECORDING_KEY.to_owned()),
            },
        )
        .with_play(play.clone());
        Self {
            app: router(state),
            db,
            play,
            pools,
            prefix,
            _db: owned,
        }
    }

    /// New live stores (a new connection for Redis) under `prefix`.
    pub async fn play_on(pools: Pools, prefix: &str, settings: PlaySettings) -> Play {
        match pools {
            Pools::Redis => play::connect_redis(&redis_url(), prefix, settings)
                .await
                .expect("test Redis reachable (MATCHPLANE_TEST_REDIS_URL)"),
            Pools::Memory => Play::in_memory(settings),
        }
    }

    /// A second handle on the same pools, as another process would hold:
    /// a new connection on Redis, the same store in memory.
    pub async fn other_process_pool(&self) -> Arc<dyn PoolStore> {
        match self.pools {
            Pools::Redis => {
                let mut config = RedisPoolConfig::new(redis_url());
                config.prefix = self.prefix.clone();
                Arc::new(RedisPoolStore::connect(config).await.unwrap())
            }
            Pools::Memory => self.play.pool.clone(),
        }
    }

    /// Serves the app on 127.0.0.1:0; returns the address.
    pub async fn serve(&self) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = self.app.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        addr
    }

    /// Sends `method path` with an optional `Authorization` value and body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        auth: Option<&str>,
        body: Option<Value>,
    ) -> Answer {
        call(&self.app, method, path, auth, body).await
    }

    /// Another API instance over the same database and live stores (a new
    /// Redis connection; in memory, the same stores), with nothing cached
    /// and no ticket generated there.
    pub async fn other_instance(&self) -> Instance {
        let play = match self.pools {
            Pools::Redis => Arc::new(Self::play_on(self.pools, &self.prefix, fast()).await),
            Pools::Memory => Arc::new(Play::new(
                self.play.pool.clone(),
                self.play.tickets.clone(),
                fast(),
            )),
        };
        Instance::over(&self.db, play)
    }

    /// Claims `ticket` (of `player`) into a match of its own, as the worker
    /// would, under a fresh lease of `project`'s `mode`.
    pub async fn claim_alone(&self, project: &str, mode: &str, ticket: &str, player: &str) {
        let mode = ModeKey::new(project, mode);
        let lease = self
            .play
            .pool
            .acquire_lease(&mode, "w", Duration::from_secs(5))
            .await
            .unwrap()
            .unwrap();
        let claim = Claim {
            match_id: "mat_1".into(),
            ticket_ids: vec![ticket.to_owned()],
            player_ids: vec![player.to_owned()],
            record_json: "{}".into(),
        };
        self.play.pool.claim(&mode, lease, &claim).await.unwrap();
    }

    /// One pass of the worker's sweep at `now` (Unix seconds), as a running
    /// worker makes every second: due searches expire, a deleted mode's or
    /// project's fail.
    pub async fn sweep(&self, now: f64) -> SweepReport {
        let now = chrono::DateTime::from_timestamp_micros((now * 1e6) as i64).unwrap();
        Sweeper {
            pool: self.play.pool.as_ref(),
            db: &self.db,
            expire_batch: 1000,
            concurrency: 16,
            ends: None,
            lapses: None,
        }
        .pass(now)
        .await
        .unwrap()
    }

    /// Stores the match `mat_1` of [`TestApp::claim_alone`] in the
    /// database, as the worker's recorder would.
    pub async fn store_match_alone(&self, project: &str, mode: &str, ticket: &str, player: &str) {
        let row = matchplane_store::entities::match_::Model {
            id: "mat_1".into(),
            project_id: project.to_owned(),
            game_mode: mode.to_owned(),
            game_mode_version: 1,
            teams: json!([{"index": 0, "meanMmr": 1500.0, "players": [{"playerId": player,
                "ticketId": ticket, "partyId": null, "mmr": 1500.0, "pingMs": null,
                "waitSeconds": 2.5}]}]),
            quality: json!({"mmrSpread": 0.0, "teamImbalance": 0.0}),
            created_at: chrono::Utc::now(),
            match_shape: None,
            seats_open: None,
            region: None,
            status: "made".into(),
            answers: None,
            made_at: None,
            assignment: None,
            attributes: None,
        };
        matchplane_store::repos::matches::insert_if_absent(&self.db, vec![row])
            .await
            .unwrap();
    }

    /// A project on `tier` with a key; returns (projectId, "Bearer key").
    pub async fn project(&self, tier: &str) -> (String, String) {
        let op = format!("Bearer {OPERATOR}");
        let a = self
            .call(
                Method::POST,
                "/v1/projects",
                Some(&op),
                Some(json!({"name": "Studio", "tier": tier})),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        let project = a.body["id"].as_str().unwrap().to_owned();
        let a = self
            .call(
                Method::POST,
                &format!("/v1/projects/{project}/keys"),
                Some(&op),
                Some(json!({"name": "backend"})),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        let key = format!("Bearer {}", a.body["key"].as_str().unwrap());
        (project, key)
    }

    /// Creates a game mode from `body`.
    pub async fn mode(&self, project: &str, key: &str, body: Value) {
        let a = self
            .call(
                Method::POST,
                &format!("/v1/projects/{project}/game-modes"),
                Some(key),
                Some(body),
            )
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    }

    /// Generates a ticket; returns the answer.
    pub async fn ticket(&self, project: &str, key: &str, body: Value) -> Answer {
        self.call(
            Method::POST,
            &format!("/v1/projects/{project}/tickets"),
            Some(key),
            Some(body),
        )
        .await
    }

    /// Generates a ticket that must succeed; returns (ticketId, token).
    pub async fn ticket_ok(&self, project: &str, key: &str, body: Value) -> (String, String) {
        let a = self.ticket(project, key, body).await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        (
            a.body["ticketId"].as_str().unwrap().to_owned(),
            a.body["token"].as_str().unwrap().to_owned(),
        )
    }

    /// Starts a REST search.
    pub async fn rest_search(&self, token: &str) -> Answer {
        self.call(
            Method::POST,
            "/v1/searches",
            None,
            Some(json!({ "ticket": token })),
        )
        .await
    }

    /// The studio's view of a ticket.
    pub async fn status(&self, project: &str, key: &str, ticket: &str) -> Answer {
        self.call(
            Method::GET,
            &format!("/v1/projects/{project}/tickets/{ticket}"),
            Some(key),
            None,
        )
        .await
    }
}

/// Sends `method path` to `app` with an optional `Authorization` value and
/// body.
pub async fn call(
    app: &Router,
    method: Method,
    path: &str,
    auth: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(auth) = auth {
        req = req.header(header::AUTHORIZATION, auth);
    }
    let req = match body {
        Some(body) => req
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(serde_json::to_vec(&body).unwrap())),
        None => req.body(Body::empty()),
    };
    let response = app.clone().oneshot(req.unwrap()).await.unwrap();
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

/// A second API instance of a [`TestApp`] (see [`TestApp::other_instance`]).
pub struct Instance {
    pub app: Router,
    pub play: Arc<Play>,
}

impl Instance {
    /// An instance over `db` and `play`.
    pub fn over(db: &DatabaseConnection, play: Arc<Play>) -> Self {
        let config = ApiConfig {
            recording_key: Some(RECORDING_KEY.to_owned()),
            ..ApiConfig::default()
        };
        let state = AppState::new(db.clone(), config).with_play(play.clone());
        Self {
            app: router(state),
            play,
        }
    }

    /// Generates a ticket here; returns the answer.
    pub async fn ticket(&self, project: &str, key: &str, body: Value) -> Answer {
        let path = format!("/v1/projects/{project}/tickets");
        call(&self.app, Method::POST, &path, Some(key), Some(body)).await
    }

    /// Generates a ticket here that must succeed; returns (ticketId, token).
    pub async fn ticket_ok(&self, project: &str, key: &str, body: Value) -> (String, String) {
        let path = format!("/v1/projects/{project}/tickets");
        let a = call(&self.app, Method::POST, &path, Some(key), Some(body)).await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        (
            a.body["ticketId"].as_str().unwrap().to_owned(),
            a.body["token"].as_str().unwrap().to_owned(),
        )
    }

    /// Starts a REST search here.
    pub async fn rest_search(&self, token: &str) -> Answer {
        let body = json!({ "ticket": token });
        call(&self.app, Method::POST, "/v1/searches", None, Some(body)).await
    }

    /// Serves this instance on 127.0.0.1:0; returns the address.
    pub async fn serve(&self) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = self.app.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        addr
    }
}

/// Sets the `free` tier's `maxConcurrentSearches` (through the operator).
pub async fn set_free_quota(t: &TestApp, max: u64) {
    let op = format!("Bearer {OPERATOR}");
    let tier = t
        .call(Method::GET, "/v1/tiers/free", Some(&op), None)
        .await
        .body;
    let tier = json!({"name": tier["name"], "minCycleDurationSeconds": tier["minCycleDurationSeconds"],
        "minBaseTolerance": tier["minBaseTolerance"], "minExpansionMultiplier": tier["minExpansionMultiplier"],
        "maxMatchSize": tier["maxMatchSize"], "maxGameModes": tier["maxGameModes"],
        "maxConcurrentSearches": max, "requestsPerSecond": tier["requestsPerSecond"]});
    let a = t
        .call(Method::PUT, "/v1/tiers/free", Some(&op), Some(tier))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

/// A 1v1 MMR mode named `name` (no webhook, parties of up to 2 allowed).
pub fn duel(name: &str) -> Value {
    json!({
        "name": name,
        "enabled": true,
        "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 5,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
        "parties": {"allowParties": true, "maxSize": 2, "keepTogether": false},
        "ticketTtlSeconds": 600
    })
}

/// A ticket body for `player` with `mmr` 1500.
pub fn solo(mode: &str, player: &str) -> Value {
    json!({"gameMode": mode, "playerId": player, "attributes": {"mmr": 1500}})
}

/// A WebSocket text message of a real search as JSON, checked against the
/// OpenAPI document's `SearchMessage` (the one a generated client reads)
/// and for timestamps in the one form (docs/openapi.md, "Timestamps").
/// Every play test that reads a socket reads it through here, so every
/// kind of message the server sends is checked as sent.
pub fn search_message(text: &str) -> Value {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let message: Value = serde_json::from_str(text).unwrap();
    let validator = VALIDATOR.get_or_init(|| {
        let doc = serde_json::to_value(matchplane_api::openapi()).unwrap();
        let root = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": "#/components/schemas/SearchMessage",
            "components": doc["components"].clone()});
        jsonschema::draft202012::new(&root).unwrap()
    });
    let errors: Vec<String> = validator
        .iter_errors(&message)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "a socket message the document refuses: {message}\n{}",
        errors.join("\n")
    );
    fn timestamps(value: &Value) {
        match value {
            Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => assert!(
                matchplane_matchmaker::timestamp::is_canonical(s),
                "timestamp {s:?} is not RFC 3339 with milliseconds and `Z`"
            ),
            Value::Array(items) => items.iter().for_each(timestamps),
            Value::Object(fields) => fields.values().for_each(timestamps),
            _ => {}
        }
    }
    timestamps(&message);
    message
}

/// A worker loop in this process over a test app's stores
/// ([`TestApp::start_worker`]), run until [`Worker::stop`].
pub struct Worker {
    shutdown: tokio_util::sync::CancellationToken,
    handle: tokio::task::JoinHandle<Result<(), matchplane_worker::WorkerError>>,
}

impl Worker {
    /// Stops the loop and waits for it; a loop that failed fails the test.
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.handle.await.unwrap().unwrap();
    }
}

/// The worker config of these tests: the mode listing re-read every 100 ms.
pub fn quick_worker() -> matchplane_worker::WorkerConfig {
    matchplane_worker::WorkerConfig {
        reconcile_interval: Duration::from_millis(100),
        ..matchplane_worker::WorkerConfig::default()
    }
}

impl TestApp {
    /// Starts a worker loop with `config` over this app's pool, tickets and
    /// database.
    pub fn start_worker(&self, config: matchplane_worker::WorkerConfig) -> Worker {
        let shutdown = tokio_util::sync::CancellationToken::new();
        let handle = tokio::spawn(matchplane_worker::run_worker(
            config,
            self.play.pool.clone(),
            self.play.tickets.clone(),
            self.db.clone(),
            shutdown.clone(),
        ));
        Worker { shutdown, handle }
    }

    /// `method path` with `auth` and a raw `body` (text a `Value` would
    /// re-spell); the status and the body's text as received.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        auth: &str,
        body: Option<String>,
    ) -> (StatusCode, String) {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, auth)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.map_or_else(Body::empty, Body::from))
            .unwrap();
        let response = self.app.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    /// The search view of `ticket` (a REST poll, keeping the search alive).
    pub async fn search_view(&self, ticket: &str, token: &str) -> Value {
        let a = self
            .call(
                Method::GET,
                &format!("/v1/searches/{ticket}"),
                Some(&format!("Ticket {token}")),
                None,
            )
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        a.body
    }

    /// Polls `searches` (ticket, token) every 100 ms, keeping them alive,
    /// until `done` holds for every view, for at most 20 s; the last views.
    pub async fn poll_until(
        &self,
        searches: &[(String, String)],
        done: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let until = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let mut views = Vec::new();
            for (ticket, token) in searches {
                views.push(self.search_view(ticket, token).await);
            }
            if views.iter().all(&done) {
                return views;
            }
            assert!(std::time::Instant::now() < until, "never came: {views:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
