//! The whole flow on real input (issue "One binary…", item 4): `matchplane
//! api` and `matchplane worker` as separate processes against real
//! PostgreSQL and Redis; 500 real players from `data/lichess` with their
//! real ratings search an MMR `[1,1]` mode over REST and a Ping `[2,2]`
//! mode with parties over WebSocket; a local receiver verifies every
//! webhook's signature with its own HMAC code. Midway the worker is killed
//! (SIGKILL) and another started: nothing may be lost or doubled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const OPERATOR: &str = "e2e-operator-token";

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// A child process killed when the test ends, whatever happens.
struct Proc(Child);

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

/// Webhooks as received: `(mode, verified, body)`.
#[derive(Default)]
struct Receiver {
    secrets: Mutex<HashMap<String, Vec<u8>>>,
    got: Mutex<Vec<(String, bool, Value)>>,
}

/// Standard Webhooks verification, written here independently of the
/// worker's signing code.
fn verify(key: &[u8], headers: &HeaderMap, body: &[u8]) -> bool {
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
    let ok = verify(&key, &headers, &body);
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    r.got.lock().unwrap().push((mode, ok, value));
    StatusCode::OK
}

/// The first `n` distinct players of the real games, with their latest rating.
fn real_players(n: usize) -> Vec<(String, f64)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/lichess/lichess-games.csv");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let mut order = Vec::new();
    let mut rating: HashMap<String, f64> = HashMap::new();
    for rec in reader.records() {
        let rec = rec.unwrap();
        for (p, r) in [(9, 10), (11, 12)] {
            let id = rec[p].to_owned();
            if !rating.contains_key(&id) {
                order.push(id.clone());
            }
            rating.insert(id, rec[r].parse().unwrap());
        }
    }
    order
        .into_iter()
        .take(n)
        .map(|p| (p.clone(), rating[&p]))
        .collect()
}

struct Api {
    base: String,
    http: reqwest::Client,
    key: String,
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

    async fn ticket(&self, project: &str, body: Value) -> (String, String) {
        let (status, t) = self
            .call(
                reqwest::Method::POST,
                &format!("/v1/projects/{project}/tickets"),
                &format!("Bearer {}", self.key),
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{t}");
        (
            t["ticketId"].as_str().unwrap().to_owned(),
            t["token"].as_str().unwrap().to_owned(),
        )
    }
}

fn match_id(m: &Value) -> Option<String> {
    m.get("matchId")
        .or_else(|| m.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// One REST search, polled every second until it ends or `deadline`.
async fn rest_search(api: Arc<Api>, token: String, ticket: String, deadline: Instant) -> Value {
    let auth = format!("Ticket {token}");
    let (status, body) = api
        .call(
            reqwest::Method::POST,
            "/v1/searches",
            &auth,
            Some(json!({"ticket": token})),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    loop {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let (_, s) = api
            .call(
                reqwest::Method::GET,
                &format!("/v1/searches/{ticket}"),
                &auth,
                None,
            )
            .await;
        if s["status"] != "searching" || Instant::now() > deadline {
            return s;
        }
    }
}

/// One WebSocket search: returns the last message (matched, failed, …) or
/// the last status seen at `deadline`.
async fn ws_search(base: String, token: String, deadline: Instant) -> Value {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_real_players_end_to_end_through_a_worker_crash() {
    // Services: a database and a Redis prefix of this test's own.
    let admin = env_or(
        "MATCHPLANE_TEST_DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/postgres",
    );
    let redis = env_or("MATCHPLANE_TEST_REDIS_URL", "redis://127.0.0.1:6379/9");
    let tag = format!("{:08x}", rand::random::<u32>());
    let _keys = RedisPrefix {
        url: redis.clone(),
        prefix: format!("mp-e2e-{tag}"),
    };
    let database = PgDatabase::create(&admin, &format!("mp_e2e_{tag}")).await;
    let db_url = database.url.clone();
    let dir = std::env::temp_dir().join(format!("mp-e2e-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();

    // Receiver.
    let receiver = Arc::new(Receiver::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/hook/{mode}", post(hook))
        .with_state(receiver.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let port = free_port();
    let env: Vec<(String, String)> = vec![
        ("DATABASE_URL".into(), db_url.clone()),
        ("REDIS_URL".into(), redis.clone()),
        ("MATCHPLANE_REDIS_PREFIX".into(), format!("mp-e2e-{tag}")),
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
    let mut worker = Some(spawn(&["worker"], &env, &dir.join("worker-1.log")));

    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let ready = Instant::now() + Duration::from_secs(60);
    while !http
        .get(format!("{base}/readyz"))
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

    // Project, key, modes.
    let mut api = Api {
        base: base.clone(),
        http,
        key: String::new(),
    };
    let op = format!("Bearer {OPERATOR}");
    let (_, project) = api
        .call(
            reqwest::Method::POST,
            "/v1/projects",
            &op,
            Some(json!({"name": "e2e", "tier": "pro"})),
        )
        .await;
    let project = project["id"].as_str().unwrap().to_owned();
    let (_, key) = api
        .call(
            reqwest::Method::POST,
            &format!("/v1/projects/{project}/keys"),
            &op,
            Some(json!({"name": "e2e"})),
        )
        .await;
    api.key = key["key"].as_str().unwrap().to_owned();
    let bearer = format!("Bearer {}", api.key);
    let modes = [
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
               "webhook": {"url": format!("http://{hook_addr}/hook/duel")}}),
        json!({"name": "squad", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "ping", "maxDelta": 100},
               "parties": {"allowParties": true, "maxSize": 2, "keepTogether": true},
               "webhook": {"url": format!("http://{hook_addr}/hook/squad")}}),
    ];
    for body in modes {
        let name = body["name"].as_str().unwrap().to_owned();
        let (status, created) = api
            .call(
                reqwest::Method::POST,
                &format!("/v1/projects/{project}/game-modes"),
                &bearer,
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        let secret = created["webhook"]["secret"].as_str().unwrap();
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.trim_start_matches("whsec_"))
            .unwrap();
        receiver.secrets.lock().unwrap().insert(name, key);
    }
    let api = Arc::new(api);

    // 500 real players: 300 duel over REST, 200 squad over WebSocket (50 duos, 100 solos).
    let players = real_players(500);
    let mmr_of: HashMap<String, f64> = players.iter().cloned().collect();
    let deadline = Instant::now() + Duration::from_secs(75);
    let mut rest = Vec::new();
    let mut sockets = Vec::new();
    let mut party_of: HashMap<String, (String, usize)> = HashMap::new();
    for (i, (player, mmr)) in players.iter().enumerate() {
        if i == 150 {
            // Half the duel players are in: kill the worker, start another.
            tokio::time::sleep(Duration::from_millis(2500)).await;
            if let Some(mut w) = worker.take() {
                w.0.kill().unwrap();
                let _ = w.0.wait();
            }
            worker = Some(spawn(&["worker"], &env, &dir.join("worker-2.log")));
        }
        if i < 300 {
            let (ticket, token) = api
                .ticket(
                    &project,
                    json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": mmr}}),
                )
                .await;
            rest.push((
                player.clone(),
                tokio::spawn(rest_search(api.clone(), token, ticket, deadline)),
            ));
        } else {
            let j = i - 300;
            let mut body = json!({"gameMode": "squad", "playerId": player});
            if j < 100 {
                let first = 300 + j - j % 2;
                let members = vec![players[first].0.clone(), players[first + 1].0.clone()];
                let pid = format!("party-{}", j / 2);
                party_of.insert(player.clone(), (pid.clone(), 2));
                body["party"] = json!({"id": pid, "members": members});
            }
            let (_, token) = api.ticket(&project, body).await;
            sockets.push((
                player.clone(),
                tokio::spawn(ws_search(base.clone(), token, deadline)),
            ));
        }
    }

    // Collect every search's end.
    let mut matched_by_status: HashMap<String, String> = HashMap::new();
    let mut waiting = Vec::new();
    for (player, task) in rest {
        let s = task.await.unwrap();
        match s["status"].as_str() {
            Some("matched") => {
                matched_by_status
                    .insert(player, match_id(&s["match"]).expect("match id in status"));
            }
            Some("searching") => waiting.push((player, s)),
            other => panic!("duel search of {player} ended {other:?}: {s}"),
        }
    }
    for (player, task) in sockets {
        let m = task.await.unwrap();
        match m["type"].as_str() {
            Some("matched") => {
                matched_by_status
                    .insert(player, match_id(&m["match"]).expect("match id in message"));
            }
            Some("searching") | Some("status") => waiting.push((player, m)),
            other => panic!("squad search of {player} ended {other:?}: {m}"),
        }
    }
    assert!(
        matched_by_status.len() >= 400,
        "only {} of 500 matched",
        matched_by_status.len()
    );

    // Every match reaches the studio (at least once), each signature verifies.
    let expected: HashSet<String> = matched_by_status.values().cloned().collect();
    let hooks_deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got: HashSet<String> = receiver
            .got
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(_, _, b)| match_id(b))
            .collect();
        if expected.is_subset(&got) || Instant::now() > hooks_deadline {
            let missing: Vec<_> = expected.difference(&got).collect();
            assert!(
                missing.is_empty(),
                "webhooks never received for {missing:?}; logs in {}",
                dir.display()
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let got = receiver.got.lock().unwrap().clone();
    assert!(
        got.iter().all(|(_, ok, _)| *ok),
        "a webhook failed verification"
    );

    // Every matched player is in exactly one match; ranges; parties whole.
    let mut matches: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for (mode, _, body) in got {
        if let Some(id) = match_id(&body) {
            matches.insert(id, (mode, body));
        }
    }
    let mut player_match: HashMap<String, String> = HashMap::new();
    for (id, (mode, body)) in &matches {
        let teams = body["teams"].as_array().unwrap();
        let mut seen_party_team: HashMap<String, (u64, usize)> = HashMap::new();
        let mut sides = Vec::new();
        for team in teams {
            for p in team["players"].as_array().unwrap() {
                let player = p["playerId"].as_str().unwrap().to_owned();
                assert!(
                    player_match.insert(player.clone(), id.clone()).is_none(),
                    "{player} in two matches"
                );
                assert_eq!(
                    matched_by_status.get(&player),
                    Some(id),
                    "{player}'s status names another match"
                );
                if let Some(pid) = p["partyId"].as_str() {
                    let entry = seen_party_team
                        .entry(pid.to_owned())
                        .or_insert((team["index"].as_u64().unwrap(), 0));
                    assert_eq!(
                        entry.0,
                        team["index"].as_u64().unwrap(),
                        "party {pid} split"
                    );
                    entry.1 += 1;
                }
                sides.push((mmr_of[&player], p["waitSeconds"].as_f64().unwrap()));
            }
        }
        for (pid, (_, count)) in seen_party_team {
            assert_eq!(count, 2, "party {pid} matched short-handed");
        }
        if mode == "duel" {
            let range = |wait: f64| (5.0 + 5.0 * (wait / 10.0)) / 100.0 * 3000.0;
            let (a, b) = (sides[0], sides[1]);
            assert!(
                (a.0 - b.0).abs() <= range(a.1).min(range(b.1)) + 1e-6,
                "duel {id} outside range: {a:?} {b:?}"
            );
        }
    }
    assert_eq!(player_match.len(), matched_by_status.len());
    for (player, pid) in &party_of {
        if let Some(m) = player_match.get(player) {
            let partner_in_same = party_of
                .iter()
                .filter(|(_, (p, _))| p == &pid.0)
                .all(|(q, _)| player_match.get(q) == Some(m));
            assert!(partner_in_same, "party {} not whole", pid.0);
        }
    }
    eprintln!(
        "e2e: {} of 500 players matched in {} matches ({} webhooks received, all verified); {} still waiting",
        matched_by_status.len(),
        matches.len(),
        receiver.got.lock().unwrap().len(),
        waiting.len()
    );
    // Whoever still waits says why.
    for (player, s) in &waiting {
        let reason = s.get("waitingReason").or_else(|| s.get("reason"));
        assert!(
            reason.is_some_and(|r| r.get("code").is_some()),
            "{player} waits without a reason: {s}"
        );
    }
    drop(worker);
    drop(_api);
    drop(database);
}

/// A PostgreSQL database of this test's own, dropped when the guard is
/// (pass or fail: a failed assertion unwinds through it).
struct PgDatabase {
    admin: String,
    name: String,
    url: String,
}

impl PgDatabase {
    /// Creates database `name` through the admin connection `admin`.
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
        // A runtime of its own: the test's may be unwinding or gone.
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

/// Whether database `name` exists, asked through `admin`.
async fn database_exists(admin: &str, name: &str) -> bool {
    let pg = sea_orm::Database::connect(admin).await.unwrap();
    let found = sea_orm::ConnectionTrait::query_one(
        &pg,
        sea_orm::Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            "SELECT 1 AS one FROM pg_database WHERE datname = $1",
            [name.into()],
        ),
    )
    .await
    .unwrap();
    pg.close().await.ok();
    found.is_some()
}

#[tokio::test]
async fn the_test_database_is_dropped_when_the_test_fails() {
    let admin = env_or(
        "MATCHPLANE_TEST_DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/postgres",
    );
    let name = format!("mp_e2e_guard_{:08x}", rand::random::<u32>());
    let (inside_admin, inside_name) = (admin.clone(), name.clone());
    let failed = tokio::spawn(async move {
        let database = PgDatabase::create(&inside_admin, &inside_name).await;
        let _ = sea_orm::Database::connect(&database.url).await.unwrap();
        assert!(database_exists(&inside_admin, &inside_name).await);
        panic!("a failing assertion of the end-to-end test");
    })
    .await;
    assert!(failed.is_err_and(|err| err.is_panic()));
    assert!(
        !database_exists(&admin, &name).await,
        "{name} leaked after a failure"
    );
}

/// This test's Redis keys, deleted when it ends (pass or fail).
struct RedisPrefix {
    url: String,
    prefix: String,
}

impl Drop for RedisPrefix {
    fn drop(&mut self) {
        let _ = matchplane_store::pool::redis::delete_prefix_blocking(&self.url, &self.prefix);
    }
}
