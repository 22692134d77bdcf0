//! What the end-to-end tests that run the real binary share: a throwaway
//! PostgreSQL database, a Redis key prefix removed afterwards, `matchplane
//! api` and `worker` child processes killed with the test, a webhook
//! receiver that verifies each Standard Webhooks signature with its own
//! HMAC code, and a small REST client.
//!
//! Used by `tests/cluster_e2e.rs`, `tests/e2e_real_data.rs` and
//! `tests/acceptance_crash.rs`; each uses only some of it, hence the
//! module-wide `dead_code` allowance.
#![allow(dead_code)]

pub mod cluster;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use base64::Engine;
use futures::StreamExt;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The operator token the spawned API is started with.
pub const OPERATOR: &str = "support-operator-token";

/// Extra environment for [`Deployment::start`]: a REST search lives
/// without polls for the test's length (the default is 30 s).
pub const LONG_REST_POLL: (&str, &str) = ("MATCHPLANE_REST_POLL_TIMEOUT", "600");

// Not every test binary that includes this module uses both.
#[allow(unused_imports)]
pub use matchplane_store::test_support::{database_url, redis_url};

/// A child process, killed (SIGKILL) when dropped.
pub struct Proc(pub Child);

impl Proc {
    /// Kills the process (SIGKILL) now and waits for it: a crash, as the
    /// crash tests mean it.
    pub fn kill(self) {
        drop(self);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port free on 127.0.0.1 when asked.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs the `matchplane` binary with `args` and `env`, its output in `log`.
pub fn spawn(args: &[&str], env: &[(String, String)], log: &FsPath) -> Proc {
    let out = std::fs::File::create(log).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        .spawn()
        .unwrap();
    Proc(child)
}

// A PostgreSQL database of the test's own, dropped with the guard (pass
// or fail: a failed assertion unwinds through it).
#[allow(unused_imports)]
pub use matchplane_store::test_support::TestDatabase;

/// One `i64` answered by `sql` (a `SELECT count(*) AS n …`) over `values`,
/// on the database at `url`.
pub async fn count(url: &str, sql: &str, values: Vec<sea_orm::Value>) -> i64 {
    let pg = sea_orm::Database::connect(url).await.unwrap();
    let row = sea_orm::ConnectionTrait::query_one(
        &pg,
        sea_orm::Statement::from_sql_and_values(sea_orm::DbBackend::Postgres, sql, values),
    )
    .await
    .unwrap()
    .unwrap();
    pg.close().await.ok();
    row.try_get::<i64>("", "n").unwrap()
}

/// The test's Redis keys (on a node or a cluster), deleted with the guard.
pub struct RedisPrefix {
    /// The Redis URL.
    pub url: String,
    /// The key prefix.
    pub prefix: String,
}

impl Drop for RedisPrefix {
    fn drop(&mut self) {
        let _ = matchplane_store::pool::redis::delete_prefix_blocking(&self.url, &self.prefix);
    }
}

/// One webhook request as received.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The game mode, from the path `/hook/{mode}`.
    pub mode: String,
    /// The `webhook-id` header.
    pub id: String,
    /// Whether a `v1` signature verified with the mode's secret.
    pub verified: bool,
    /// The body.
    pub body: Value,
}

/// A webhook receiver: `POST /hook/{mode}`, each verified with that
/// mode's secret (set with [`Receiver::secret`]), answered `200` (the next
/// one only after a pause, if [`Receiver::hold_next`] asked for one).
#[derive(Default)]
pub struct Receiver {
    secrets: Mutex<HashMap<String, Vec<u8>>>,
    got: Mutex<Vec<Hook>>,
    hold: Mutex<Option<Duration>>,
}

impl Receiver {
    /// Serves a receiver on 127.0.0.1; returns it and its address.
    pub async fn serve() -> (Arc<Self>, SocketAddr) {
        let receiver = Arc::new(Self::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/hook/{mode}", post(hook))
            .with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (receiver, addr)
    }

    /// Verifies `mode`'s webhooks with `secret` (`whsec_<base64>`).
    pub fn secret(&self, mode: &str, secret: &str) {
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.trim_start_matches("whsec_"))
            .unwrap();
        self.secrets.lock().unwrap().insert(mode.to_owned(), key);
    }

    /// Answers the next request only after `pause` (it is recorded at
    /// once): long enough for a test to kill the worker mid-delivery.
    pub fn hold_next(&self, pause: Duration) {
        *self.hold.lock().unwrap() = Some(pause);
    }

    /// Every request received so far.
    pub fn got(&self) -> Vec<Hook> {
        self.got.lock().unwrap().clone()
    }

    /// The requests received for match `match_id`.
    pub fn of_match(&self, match_id: &str) -> Vec<Hook> {
        self.got()
            .into_iter()
            .filter(|h| h.body["matchId"] == match_id)
            .collect()
    }
}

/// Standard Webhooks verification (HMAC-SHA256 over
/// `<webhook-id>.<webhook-timestamp>.<raw body>`), written here
/// independently of the worker's signing code.
pub fn verify(key: &[u8], headers: &HeaderMap, body: &[u8]) -> bool {
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let (id, ts, sigs) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    );
    if key.is_empty() || id.is_empty() || ts.is_empty() {
        return false;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(body);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    sigs.split(' ')
        .any(|s| s.strip_prefix("v1,") == Some(expected.as_str()))
}

async fn hook(
    State(r): State<Arc<Receiver>>,
    Path(mode): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let key = r
        .secrets
        .lock()
        .unwrap()
        .get(&mode)
        .cloned()
        .unwrap_or_default();
    let verified = verify(&key, &headers, &body);
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    r.got.lock().unwrap().push(Hook {
        mode,
        id,
        verified,
        body,
    });
    let hold = r.hold.lock().unwrap().take();
    if let Some(pause) = hold {
        tokio::time::sleep(pause).await;
    }
    StatusCode::OK
}

/// An answer: status, `Retry-After` (if any) and the JSON body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status; `0` when the request itself failed (connection).
    pub status: u16,
    /// The `Retry-After` header.
    pub retry_after: Option<String>,
    /// The body as JSON (`Null` when it is not).
    pub body: Value,
}

/// A REST client of the spawned API.
#[derive(Clone)]
pub struct Api {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The HTTP client.
    pub http: reqwest::Client,
}

impl Api {
    /// `method path` with `authorization: auth` and an optional JSON body.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        auth: &str,
        body: Option<Value>,
    ) -> Answer {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .timeout(Duration::from_secs(15))
            .header("authorization", auth);
        if let Some(b) = body {
            req = req.json(&b);
        }
        match req.send().await {
            Ok(resp) => Answer {
                status: resp.status().as_u16(),
                retry_after: resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
                body: resp.json().await.unwrap_or(Value::Null),
            },
            Err(_) => Answer {
                status: 0,
                retry_after: None,
                body: Value::Null,
            },
        }
    }

    /// As [`Api::send`], returning status and body only.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        auth: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let a = self.send(method, path, auth, body).await;
        (a.status, a.body)
    }

    /// Waits (at most `within`) until `/readyz` answers `200`.
    pub async fn wait_ready(&self, within: Duration, logs: &FsPath) {
        let deadline = Instant::now() + within;
        while !self
            .http
            .get(format!("{}/readyz", self.base))
            .send()
            .await
            .is_ok_and(|r| r.status().as_u16() == 200)
        {
            assert!(
                Instant::now() < deadline,
                "api not ready; see {}",
                logs.display()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// A running installation: a database, `matchplane api` and some workers on
/// the given Redis, a receiver, and a project with an admin key.
pub struct Deployment {
    /// The REST client.
    pub api: Api,
    /// The project's id.
    pub project: String,
    /// `Bearer <the project's key>`.
    pub bearer: String,
    /// The webhook receiver.
    pub receiver: Arc<Receiver>,
    /// The receiver's address.
    pub hook_addr: SocketAddr,
    /// The processes' logs.
    pub dir: PathBuf,
    /// The Redis key prefix.
    pub prefix: String,
    /// The running processes (api first).
    pub procs: Vec<Proc>,
    /// The database (dropped after the processes).
    pub database: TestDatabase,
    /// The processes' environment.
    env: Vec<(String, String)>,
    _keys: RedisPrefix,
}

impl Deployment {
    /// Starts an API and `workers` workers (`worker-1.log` …) on `redis`
    /// under a fresh prefix and database named after `name`, with `extra`
    /// added to their environment, and makes a project and a key.
    pub async fn start(name: &str, redis: &str, workers: usize, extra: &[(&str, &str)]) -> Self {
        let admin = database_url();
        let tag = format!("{:08x}", rand::random::<u32>());
        let prefix = format!("mp-{name}-{tag}");
        let keys = RedisPrefix {
            url: redis.to_owned(),
            prefix: prefix.clone(),
        };
        let database = TestDatabase::create_named(&admin, &format!("mp_{name}_{tag}")).await;
        let dir = std::env::temp_dir().join(&prefix);
        std::fs::create_dir_all(&dir).unwrap();
        let (receiver, hook_addr) = Receiver::serve().await;

        let port = free_port();
        let mut env: Vec<(String, String)> = vec![
            ("DATABASE_URL".into(), database.url().to_owned()),
            ("REDIS_URL".into(), redis.to_owned()),
            ("MATCHPLANE_REDIS_PREFIX".into(), prefix.clone()),
            ("MATCHPLANE_OPERATOR_TOKEN".into(), OPERATOR.into()),
            ("MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS".into(), "true".into()),
            ("MATCHPLANE_LISTEN".into(), format!("127.0.0.1:{port}")),
            ("MATCHPLANE_LEASE_TTL_SECONDS".into(), "2".into()),
            ("RUST_LOG".into(), "info".into()),
        ];
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let migrate = Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .arg("migrate")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        assert!(
            migrate.status.success(),
            "{}",
            String::from_utf8_lossy(&migrate.stderr)
        );
        let mut procs = vec![spawn(&["api"], &env, &dir.join("api.log"))];
        procs.extend((1..=workers).map(|n| spawn_worker(&env, &dir, n)));
        let api = Api {
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        api.wait_ready(Duration::from_secs(60), &dir).await;

        let op = format!("Bearer {OPERATOR}");
        let (status, project) = api
            .call(
                reqwest::Method::POST,
                "/v1/projects",
                &op,
                Some(json!({"name": name, "tier": "pro"})),
            )
            .await;
        assert_eq!(status, 201, "{project}");
        let project = project["id"].as_str().unwrap().to_owned();
        let (status, key) = api
            .call(
                reqwest::Method::POST,
                &format!("/v1/projects/{project}/keys"),
                &op,
                Some(json!({"name": name})),
            )
            .await;
        assert_eq!(status, 201, "{key}");
        let bearer = format!("Bearer {}", key["key"].as_str().unwrap());
        Self {
            api,
            project,
            bearer,
            receiver,
            hook_addr,
            dir,
            prefix,
            procs,
            database,
            env,
            _keys: keys,
        }
    }

    /// Starts one more `matchplane worker`, its output in `worker-{n}.log`;
    /// it is the caller's to keep (and kill).
    pub fn worker(&self, n: usize) -> Proc {
        spawn_worker(&self.env, &self.dir, n)
    }

    /// Kills the API (`procs[0]`) and starts it again on the same address,
    /// database and Redis (`api-{n}.log`), waiting until it is ready.
    pub async fn restart_api(&mut self, n: usize) {
        self.procs.remove(0).kill();
        let api = spawn(&["api"], &self.env, &self.dir.join(format!("api-{n}.log")));
        self.procs.insert(0, api);
        self.api
            .wait_ready(Duration::from_secs(60), &self.dir)
            .await;
    }

    /// Creates game mode `body` (its `webhook` pointed at the receiver) and
    /// registers its signing secret with the receiver.
    pub async fn mode(&self, mut body: Value) {
        let name = body["name"].as_str().unwrap().to_owned();
        body["webhook"] = json!({"url": format!("http://{}/hook/{name}", self.hook_addr)});
        let (status, created) = self
            .api
            .call(
                reqwest::Method::POST,
                &format!("/v1/projects/{}/game-modes", self.project),
                &self.bearer,
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        self.receiver
            .secret(&name, created["webhook"]["secret"].as_str().unwrap());
    }

    /// A ticket of `player` in `mode` with `mmr`: `(ticketId, token)`.
    pub async fn ticket(&self, mode: &str, player: &str, mmr: f64) -> (String, String) {
        self.ticket_of(json!({"gameMode": mode, "playerId": player, "attributes": {"mmr": mmr}}))
            .await
    }

    /// A ticket made from `body`: `(ticketId, token)`.
    pub async fn ticket_of(&self, body: Value) -> (String, String) {
        let (status, t) = self
            .api
            .call(
                reqwest::Method::POST,
                &format!("/v1/projects/{}/tickets", self.project),
                &self.bearer,
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{t}");
        (
            t["ticketId"].as_str().unwrap().to_owned(),
            t["token"].as_str().unwrap().to_owned(),
        )
    }

    /// Starts a REST search with `token`; returns the answer.
    pub async fn rest_search(&self, token: &str) -> Answer {
        self.api
            .send(
                reqwest::Method::POST,
                "/v1/searches",
                &format!("Ticket {token}"),
                Some(json!({"ticket": token})),
            )
            .await
    }

    /// The REST status of `ticket` (a poll, which keeps it alive).
    pub async fn status(&self, ticket: &str, token: &str) -> Answer {
        self.api
            .send(
                reqwest::Method::GET,
                &format!("/v1/searches/{ticket}"),
                &format!("Ticket {token}"),
                None,
            )
            .await
    }

    /// Polls `ticket` until its status is no longer `searching` or
    /// `within` passed; returns the last status body.
    pub async fn until_ended(&self, ticket: &str, token: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let a = self.status(ticket, token).await;
            let ended = a.status == 200 && a.body["status"] != "searching";
            if ended || Instant::now() > deadline {
                return a.body;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Polls every search of `searches` (player, ticket, token) until at
    /// least `want` players are matched or `within` passed; returns each
    /// matched player's `match` view by player.
    pub async fn until_matched(
        &self,
        searches: &[(String, String, String)],
        want: usize,
        within: Duration,
    ) -> std::collections::HashMap<String, Value> {
        let deadline = Instant::now() + within;
        let mut matched = std::collections::HashMap::new();
        while Instant::now() < deadline && matched.len() < want {
            tokio::time::sleep(Duration::from_millis(500)).await;
            for (player, ticket, token) in searches {
                if matched.contains_key(player) {
                    continue;
                }
                let s = self.status(ticket, token).await.body;
                if s["status"] == "matched" {
                    matched.insert(player.clone(), s["match"].clone());
                }
            }
        }
        matched
    }

    /// `player`'s own view of its match: the one [`Self::until_matched`]
    /// saw, else its status asked again until matched (at most 10 s): a
    /// polling pass may have asked before the match was made, and stopped
    /// once enough others were matched.
    pub async fn matched_view(
        &self,
        matched: &std::collections::HashMap<String, Value>,
        searches: &[(String, String, String)],
        player: &str,
    ) -> Value {
        if let Some(view) = matched.get(player) {
            return view.clone();
        }
        let search = searches
            .iter()
            .find(|s| s.0 == player)
            .unwrap_or_else(|| panic!("{player} has no search"));
        let again = self
            .until_matched(std::slice::from_ref(search), 1, Duration::from_secs(10))
            .await;
        again
            .get(player)
            .cloned()
            .unwrap_or_else(|| panic!("{player} is in a match but its status is not matched"))
    }

    /// Waits until at least `n` webhook requests of match `match_id`
    /// arrived (at most `within`); returns every request received for it.
    pub async fn hooks_of(&self, match_id: &str, n: usize, within: Duration) -> Vec<Hook> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.receiver.of_match(match_id);
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// How many matches the database holds for this project.
    pub async fn stored_matches(&self) -> i64 {
        count(
            self.database.url(),
            "SELECT count(*) AS n FROM matches WHERE project_id = $1",
            vec![self.project.clone().into()],
        )
        .await
    }
}

/// `matchplane worker` with `env`, its output in `dir/worker-{n}.log`.
fn spawn_worker(env: &[(String, String)], dir: &FsPath, n: usize) -> Proc {
    spawn(&["worker"], env, &dir.join(format!("worker-{n}.log")))
}

/// One WebSocket search on `base` with `token`: returns its last message
/// (`matched`, `failed`, …) or the last one seen at `deadline`.
pub async fn ws_search(base: String, token: String, deadline: Instant) -> Value {
    let url = format!(
        "{}/v1/search?ticket={token}",
        base.replacen("http", "ws", 1)
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut last = Value::Null;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, socket.next()).await {
            Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text)))) => {
                last = serde_json::from_str(&text).unwrap_or(Value::Null);
                if ["matched", "failed", "cancelled", "expired"]
                    .contains(&last["type"].as_str().unwrap_or(""))
                {
                    return last;
                }
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(_))) | Ok(None) => return last,
            Err(_) => {
                let _ = socket.close(None).await;
                return last;
            }
        }
    }
}

/// The player ids of each team of a `match.made` body.
pub fn players_of(body: &Value) -> Vec<String> {
    body["teams"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["players"].as_array().into_iter().flatten())
        .filter_map(|p| p["playerId"].as_str().map(str::to_owned))
        .collect()
}
