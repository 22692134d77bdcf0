//! A worker SIGKILLed between the last accept of a proposal and its
//! webhook (issue 18, a case from other matchmakers' bug trackers):
//! `matchplane api` and `matchplane worker` as separate processes on real
//! PostgreSQL and Redis, a mode with `acceptance`, two players who search
//! over REST and accept. Twice:
//!
//! 1. the worker is killed while the `match.made` delivery is in flight
//!    (the receiver holds the first request); the next worker sends it
//!    again with the same `webhook-id`;
//! 2. the worker is killed right after the last accept, before it stored
//!    the match; the next one stores it and sends its webhook.
//!
//! Each match is made once, `match.made` arrives at least once and always
//! under one `webhook-id`, and both players end `matched` with its id.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const OPERATOR: &str = "crash-operator-token";

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// A child process killed (SIGKILL) when dropped.
struct Proc(Child);

impl Proc {
    fn kill(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(args: &[&str], env: &[(String, String)], log: &PathBuf) -> Proc {
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

/// Webhooks as received, `(webhook-id, body)`; the first request is held
/// for `hold_first` before it is answered.
struct Receiver {
    got: Mutex<Vec<(String, Value)>>,
    hold_first: AtomicBool,
}

async fn hook(State(r): State<Arc<Receiver>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    r.got.lock().unwrap().push((id, value));
    if r.hold_first.swap(false, Ordering::SeqCst) {
        // Long enough for the test to kill the worker mid-attempt.
        tokio::time::sleep(Duration::from_secs(20)).await;
    }
    StatusCode::OK
}

struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        auth: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("authorization", auth);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }
}

/// Polls `ticket`'s REST search (keeping it alive) until its status is
/// `want`; returns that status.
async fn until_status(api: &Api, ticket: &str, token: &str, want: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (_, s) = api
            .call(
                reqwest::Method::GET,
                &format!("/v1/searches/{ticket}"),
                &format!("Ticket {token}"),
                None,
            )
            .await;
        if s["status"] == want {
            return s;
        }
        assert!(Instant::now() < deadline, "{ticket} never {want}: {s}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Two players search and are proposed; returns their `(ticket, token)`
/// and the proposal's match id.
async fn proposed_pair(
    api: &Api,
    project: &str,
    bearer: &str,
    round: usize,
) -> ([(String, String); 2], String) {
    let mut pair = Vec::new();
    for side in ["a", "b"] {
        let (status, t) = api
            .call(
                reqwest::Method::POST,
                &format!("/v1/projects/{project}/tickets"),
                bearer,
                Some(
                    json!({"gameMode": "duel", "playerId": format!("{side}{round}"),
                            "attributes": {"mmr": 1500}}),
                ),
            )
            .await;
        assert_eq!(status, 201, "{t}");
        let (ticket, token) = (
            t["ticketId"].as_str().unwrap().to_owned(),
            t["token"].as_str().unwrap().to_owned(),
        );
        let (status, body) = api
            .call(
                reqwest::Method::POST,
                "/v1/searches",
                &format!("Ticket {token}"),
                Some(json!({"ticket": token})),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        pair.push((ticket, token));
    }
    let mut match_id = String::new();
    for (ticket, token) in &pair {
        let s = until_status(api, ticket, token, "proposed", Duration::from_secs(30)).await;
        match_id = s["proposal"]["matchId"].as_str().unwrap().to_owned();
    }
    ([pair[0].clone(), pair[1].clone()], match_id)
}

async fn accept_both(api: &Api, pair: &[(String, String); 2]) {
    for (ticket, token) in pair {
        let (status, body) = api
            .call(
                reqwest::Method::POST,
                &format!("/v1/searches/{ticket}/accept"),
                &format!("Ticket {token}"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
}

/// The deliveries received for `match_id`, waiting up to `within` until
/// there are at least `n`.
async fn deliveries_of(
    r: &Receiver,
    match_id: &str,
    n: usize,
    within: Duration,
) -> Vec<(String, Value)> {
    let deadline = Instant::now() + within;
    loop {
        let got: Vec<(String, Value)> = r
            .got
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, body)| body["matchId"] == match_id)
            .cloned()
            .collect();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every delivery of one match: `match.made`, one `webhook-id`.
fn one_event(got: &[(String, Value)], match_id: &str) {
    assert!(!got.is_empty(), "no match.made for {match_id}");
    for (id, body) in got {
        assert_eq!(body["type"], "match.made", "{body}");
        assert_eq!(id, &got[0].0, "one webhook-id per match: {got:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_between_the_last_accept_and_the_webhook_sends_it_once_under_one_id() {
    let admin = env_or(
        "MATCHPLANE_TEST_DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/postgres",
    );
    let redis = env_or("MATCHPLANE_TEST_REDIS_URL", "redis://127.0.0.1:6379/9");
    let tag = format!("{:08x}", rand::random::<u32>());
    let prefix = format!("mp-crash-{tag}");
    let _keys = RedisPrefix {
        url: redis.clone(),
        prefix: prefix.clone(),
    };
    let database = PgDatabase::create(&admin, &format!("mp_crash_{tag}")).await;
    let dir = std::env::temp_dir().join(format!("mp-crash-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();

    let receiver = Arc::new(Receiver {
        got: Mutex::default(),
        hold_first: AtomicBool::new(true),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/hook", post(hook))
        .with_state(receiver.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let port = free_port();
    let env: Vec<(String, String)> = vec![
        ("DATABASE_URL".into(), database.url.clone()),
        ("REDIS_URL".into(), redis.clone()),
        ("MATCHPLANE_REDIS_PREFIX".into(), prefix.clone()),
        ("MATCHPLANE_OPERATOR_TOKEN".into(), OPERATOR.into()),
        ("MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS".into(), "true".into()),
        ("MATCHPLANE_LISTEN".into(), format!("127.0.0.1:{port}")),
        ("MATCHPLANE_LEASE_TTL_SECONDS".into(), "2".into()),
        ("RUST_LOG".into(), "info".into()),
    ];
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
    let _api = spawn(&["api"], &env, &dir.join("api.log"));
    let worker = spawn(&["worker"], &env, &dir.join("worker-1.log"));

    let api = Api {
        base: format!("http://127.0.0.1:{port}"),
        http: reqwest::Client::new(),
    };
    let ready = Instant::now() + Duration::from_secs(60);
    while !api
        .http
        .get(format!("{}/readyz", api.base))
        .send()
        .await
        .is_ok_and(|r| r.status().as_u16() == 200)
    {
        assert!(
            Instant::now() < ready,
            "api not ready; see {}",
            dir.display()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let op = format!("Bearer {OPERATOR}");
    let (_, project) = api
        .call(
            reqwest::Method::POST,
            "/v1/projects",
            &op,
            Some(json!({"name": "crash", "tier": "pro"})),
        )
        .await;
    let project = project["id"].as_str().unwrap().to_owned();
    let (_, key) = api
        .call(
            reqwest::Method::POST,
            &format!("/v1/projects/{project}/keys"),
            &op,
            Some(json!({"name": "crash"})),
        )
        .await;
    let bearer = format!("Bearer {}", key["key"].as_str().unwrap());
    let (status, created) = api
        .call(
            reqwest::Method::POST,
            &format!("/v1/projects/{project}/game-modes"),
            &bearer,
            Some(
                json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                        "algorithm": {"type": "fifo"},
                        "acceptance": {"timeoutSeconds": 60},
                        "webhook": {"url": format!("http://{hook_addr}/hook")}}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");

    // 1. Killed while the webhook is in flight.
    let (pair, first) = proposed_pair(&api, &project, &bearer, 1).await;
    accept_both(&api, &pair).await;
    let got = deliveries_of(&receiver, &first, 1, Duration::from_secs(30)).await;
    assert_eq!(
        got.len(),
        1,
        "the first attempt never came; see {}",
        dir.display()
    );
    worker.kill();
    let worker = spawn(&["worker"], &env, &dir.join("worker-2.log"));
    // Sent again once the killed attempt's claim lapses (30 s).
    let got = deliveries_of(&receiver, &first, 2, Duration::from_secs(60)).await;
    assert!(
        got.len() >= 2,
        "never sent again: {got:?}; see {}",
        dir.display()
    );
    one_event(&got, &first);
    for (ticket, token) in &pair {
        let s = until_status(&api, ticket, token, "matched", Duration::from_secs(10)).await;
        assert_eq!(s["match"]["matchId"], first.as_str(), "{s}");
    }

    // 2. Killed right after the last accept, before the match is stored.
    let (pair, second) = proposed_pair(&api, &project, &bearer, 2).await;
    accept_both(&api, &pair).await;
    worker.kill();
    let _worker = spawn(&["worker"], &env, &dir.join("worker-3.log"));
    let got = deliveries_of(&receiver, &second, 1, Duration::from_secs(60)).await;
    one_event(&got, &second);
    for (ticket, token) in &pair {
        let s = until_status(&api, ticket, token, "matched", Duration::from_secs(10)).await;
        assert_eq!(s["match"]["matchId"], second.as_str(), "{s}");
    }
    // Nothing else arrives: one event per match, never a second id.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let all = receiver.got.lock().unwrap().clone();
    let ids: std::collections::BTreeSet<&str> = all.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), 2, "one webhook-id per match: {all:?}");
}

/// A PostgreSQL database of this test's own, dropped with the guard.
struct PgDatabase {
    admin: String,
    name: String,
    url: String,
}

impl PgDatabase {
    async fn create(admin: &str, name: &str) -> Self {
        let pg = sea_orm::Database::connect(admin).await.unwrap();
        sea_orm::ConnectionTrait::execute_unprepared(&pg, &format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        pg.close().await.ok();
        let (base, query) = match admin.split_once('?') {
            Some((base, query)) => (base, format!("?{query}")),
            None => (admin, String::new()),
        };
        let head = &base[..base.rfind('/').expect("a database URL has a path")];
        Self {
            admin: admin.to_owned(),
            name: name.to_owned(),
            url: format!("{head}/{name}{query}"),
        }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let admin = self.admin.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(pg) = sea_orm::Database::connect(&admin).await {
                    let _ = sea_orm::ConnectionTrait::execute_unprepared(&pg, &sql).await;
                    pg.close().await.ok();
                }
            });
        })
        .join();
    }
}

/// The test's Redis keys, deleted with the guard.
struct RedisPrefix {
    url: String,
    prefix: String,
}

impl Drop for RedisPrefix {
    fn drop(&mut self) {
        let _ = matchplane_store::pool::redis::delete_prefix_blocking(&self.url, &self.prefix);
    }
}
