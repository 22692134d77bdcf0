//! The whole flow on real input (issue "One binary…", item 4): `matchplane
//! api` and `matchplane worker` as separate processes against real
//! PostgreSQL and Redis; 500 real players from `data/lichess` with their
//! real ratings search an MMR `[1,1]` mode over REST and a Ping `[2,2]`
//! mode with parties over WebSocket; a local receiver verifies every
//! webhook's signature with its own HMAC code. Midway the worker is killed
//! (SIGKILL) and another started: nothing may be lost or doubled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{database_url, redis_url, ws_search, Deployment, TestDatabase};

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

fn match_id(m: &Value) -> Option<String> {
    m.get("matchId")
        .or_else(|| m.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// One REST search, polled every second until it ends or `deadline`.
async fn rest_search(
    d: Arc<Deployment>,
    token: String,
    ticket: String,
    deadline: Instant,
) -> Value {
    let a = d.rest_search(&token).await;
    assert_eq!(a.status, 202, "{}", a.body);
    loop {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let s = d.status(&ticket, &token).await.body;
        if s["status"] != "searching" || Instant::now() > deadline {
            return s;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_real_players_end_to_end_through_a_worker_crash() {
    // Services: a database and a Redis prefix of this test's own, the
    // API, a worker, a receiver, a project, its key and two modes.
    let redis = redis_url();
    let d = Arc::new(Deployment::start("e2e", &redis, 0, &[]).await);
    let mut worker = Some(d.worker(1));
    d.mode(
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}}),
    )
    .await;
    d.mode(
        json!({"name": "squad", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "ping", "maxDelta": 100},
               "parties": {"allowParties": true, "maxSize": 2, "keepTogether": true}}),
    )
    .await;
    let dir = d.dir.clone();

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
            if let Some(w) = worker.take() {
                w.kill();
            }
            worker = Some(d.worker(2));
        }
        if i < 300 {
            let (ticket, token) = d.ticket("duel", player, *mmr).await;
            rest.push((
                player.clone(),
                tokio::spawn(rest_search(d.clone(), token, ticket, deadline)),
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
            let (_, token) = d.ticket_of(body).await;
            sockets.push((
                player.clone(),
                tokio::spawn(ws_search(d.api.base.clone(), token, deadline)),
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
        let got: HashSet<String> = d
            .receiver
            .got()
            .iter()
            .filter_map(|h| match_id(&h.body))
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
    let got = d.receiver.got();
    assert!(
        got.iter().all(|h| h.verified),
        "a webhook failed verification"
    );

    // Every matched player is in exactly one match; ranges; parties whole.
    let mut matches: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for hook in got {
        if let Some(id) = match_id(&hook.body) {
            matches.insert(id, (hook.mode, hook.body));
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
        d.receiver.got().len(),
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
    let admin = database_url();
    let name = format!("mp_e2e_guard_{:08x}", rand::random::<u32>());
    let (inside_admin, inside_name) = (admin.clone(), name.clone());
    let failed = tokio::spawn(async move {
        let database = TestDatabase::create_named(&inside_admin, &inside_name).await;
        let _ = sea_orm::Database::connect(database.url()).await.unwrap();
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
