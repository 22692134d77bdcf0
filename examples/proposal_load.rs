//! Load of acceptance on Redis (issue 18's goal): many concurrent `[1,1]`
//! proposals, their players' answers arriving over a few seconds through
//! the API over HTTP, and the worker's deadline sweep closing the silent
//! ones. Prints the answers per second the API served (with their
//! latency), whether every proposal was resolved within its deadline plus
//! one second, and the worker's resolution lag (closed at minus
//! `acceptBy`) of the proposals it closed.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/load REDIS_URL=redis://127.0.0.1:6379/13 \
//!   cargo run --release --example proposal_load -- 10000 5 10
//! ```
//! Arguments: proposals (10 000), seconds the answers are spread over (5),
//! `timeoutSeconds` (10). 90 % of the players accept, 5 % decline, 5 %
//! stay silent, each at a uniform random moment of the spread. The API and
//! a worker run in this process (the real router served on a local port,
//! the real worker loop); the database is migrated, the Redis prefix is
//! the run's own and deleted at the end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::Method;
use bench_support::call;
use matchplane_api::play::PlaySettings;
use matchplane_store::pool::ModeKey;
use matchplane_worker::{run_worker, WorkerConfig};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[path = "bench_support/mod.rs"]
mod bench_support;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Concurrent HTTP connections of the answering clients.
const CONNECTIONS: usize = 64;

fn now_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Nearest-rank percentile of sorted `v`.
fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[derive(Clone, Copy, PartialEq)]
enum Plan {
    Accept,
    Decline,
    Silent,
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let proposals: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let spread: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let timeout: f64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let redis = std::env::var("REDIS_URL").expect("REDIS_URL");
    let prefix = format!("mpload{}", rand::random::<u32>());
    let settings = PlaySettings {
        // Nobody polls while waiting to be proposed: no REST expiry here.
        rest_poll_timeout: Duration::from_secs(600),
        ..PlaySettings::default()
    };
    let bench = bench_support::start(&prefix, settings, None).await;
    let (db, play, app) = (bench.db, bench.play, bench.app);
    let (project, bearer) = (bench.project, bench.key);
    call(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/game-modes"),
        &bearer,
        json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "fifo"},
            "acceptance": {"timeoutSeconds": timeout}, "ticketTtlSeconds": 3600}),
    )
    .await;

    // Tickets and REST searches, in-process (not measured).
    let players = proposals * 2;
    let mut tickets: Vec<(String, String)> = Vec::with_capacity(players);
    let started = Instant::now();
    for i in 0..players {
        let t = call(
            &app,
            Method::POST,
            &format!("/v1/projects/{project}/tickets"),
            &bearer,
            json!({"gameMode": "duel", "playerId": format!("p{i}")}),
        )
        .await;
        let (ticket, token) = (
            t["ticketId"].as_str().unwrap().to_owned(),
            t["token"].as_str().unwrap().to_owned(),
        );
        call(
            &app,
            Method::POST,
            "/v1/searches",
            "",
            json!({"ticket": token}),
        )
        .await;
        tickets.push((ticket, token));
    }
    println!(
        "{players} searches started in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // The worker proposes them all at its next cycle.
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(run_worker(
        WorkerConfig::default(),
        play.pool.clone(),
        play.tickets.clone(),
        db.clone(),
        shutdown.clone(),
    ));
    let mode = ModeKey::new(&project, "duel");
    let wait = Instant::now();
    let ids = loop {
        let open = play
            .pool
            .open_proposals(&mode, f64::INFINITY, players)
            .await
            .unwrap();
        if open.len() >= proposals {
            break open;
        }
        assert!(
            wait.elapsed() < Duration::from_secs(120),
            "only {} proposals",
            open.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut accept_by: HashMap<String, f64> = HashMap::new();
    let mut members: HashMap<String, Vec<String>> = HashMap::new();
    for id in &ids {
        let state = play.pool.proposal(&mode, id).await.unwrap().unwrap();
        accept_by.insert(id.clone(), state.accept_by);
        members.insert(
            id.clone(),
            state.members.iter().map(|m| m.ticket_id.clone()).collect(),
        );
    }
    println!(
        "{} proposals open {:.1} s after the worker started",
        ids.len(),
        wait.elapsed().as_secs_f64()
    );

    // Serve the API over TCP and answer over HTTP.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await.unwrap() });
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let plans: HashMap<String, Plan> = tickets
        .iter()
        .map(|(ticket, _)| {
            let r: f64 = rng.gen();
            let plan = if r < 0.05 {
                Plan::Decline
            } else if r < 0.10 {
                Plan::Silent
            } else {
                Plan::Accept
            };
            (ticket.clone(), plan)
        })
        .collect();
    let mut answers: Vec<(f64, String, String, bool)> = tickets
        .iter()
        .filter(|(ticket, _)| plans[ticket] != Plan::Silent)
        .map(|(ticket, token)| {
            (
                rng.gen::<f64>() * spread,
                ticket.clone(),
                token.clone(),
                plans[ticket] == Plan::Accept,
            )
        })
        .collect();
    answers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()
        .unwrap();
    let gate = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    let t0 = Instant::now();
    let t0_unix = now_secs();
    let mut sent = tokio::task::JoinSet::new();
    for (at, ticket, token, accept) in answers {
        let due = Duration::from_secs_f64(at);
        if let Some(left) = due.checked_sub(t0.elapsed()) {
            tokio::time::sleep(left).await;
        }
        let permit = gate.clone().acquire_owned().await.unwrap();
        let (http, base) = (http.clone(), format!("http://{addr}"));
        sent.spawn(async move {
            let word = if accept { "accept" } else { "decline" };
            let begin = Instant::now();
            let response = http
                .post(format!("{base}/v1/searches/{ticket}/{word}"))
                .header("authorization", format!("Ticket {token}"))
                .send()
                .await;
            drop(permit);
            let ok = response.is_ok_and(|r| r.status().is_success());
            (begin.elapsed().as_secs_f64(), ok, now_secs())
        });
    }
    // Meanwhile: when each proposal leaves the open set (polled every 50 ms).
    let mut resolved_at: HashMap<String, f64> = HashMap::new();
    let watched: HashSet<String> = ids.iter().cloned().collect();
    let (mut latencies, mut failed, mut last_done) = (Vec::new(), 0usize, 0.0f64);
    // Watch until every proposal closed, at most 30 s past the last
    // deadline (or past now, when set-up ran past the deadlines).
    let deadline = accept_by.values().cloned().fold(now_secs(), f64::max) + 30.0;
    while resolved_at.len() < watched.len() && now_secs() < deadline {
        while let Some(done) = sent.try_join_next() {
            let (latency, ok, at) = done.unwrap();
            latencies.push(latency);
            failed += usize::from(!ok);
            last_done = last_done.max(at);
        }
        let open: HashSet<String> = play
            .pool
            .open_proposals(&mode, f64::INFINITY, players * 2)
            .await
            .unwrap()
            .into_iter()
            .collect();
        let now = now_secs();
        for id in &watched {
            if !open.contains(id) {
                resolved_at.entry(id.clone()).or_insert(now);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    while let Some(done) = sent.join_next().await {
        let (latency, ok, at) = done.unwrap();
        latencies.push(latency);
        failed += usize::from(!ok);
        last_done = last_done.max(at);
    }
    let answering = last_done - t0_unix;
    latencies.sort_by(f64::total_cmp);

    // Which proposals the worker closed: those with a silent member and no
    // decliner (every other one is closed by the answer that ends it).
    let mut lags = Vec::new();
    let mut late = 0;
    let mut unresolved = 0;
    for id in &ids {
        let Some(at) = resolved_at.get(id) else {
            unresolved += 1;
            continue;
        };
        let by = accept_by[id];
        if *at > by + 1.0 {
            late += 1;
        }
        let plans_of: Vec<Plan> = members[id].iter().map(|t| plans[t]).collect();
        if plans_of.contains(&Plan::Silent) && !plans_of.contains(&Plan::Decline) {
            lags.push(at - by);
        }
    }
    lags.sort_by(f64::total_cmp);
    println!(
        "answers: {} in {:.2} s = {:.0}/s ({} failed); latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        answering,
        latencies.len() as f64 / answering,
        failed,
        pct(&latencies, 0.5) * 1e3,
        pct(&latencies, 0.99) * 1e3,
        pct(&latencies, 1.0) * 1e3
    );
    println!(
        "proposals: {} watched, {} unresolved, {} resolved later than acceptBy + 1 s",
        ids.len(),
        unresolved,
        late
    );
    println!(
        "worker resolution lag (closed at minus acceptBy, 50 ms polling) over {} timed-out proposals: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        lags.len(),
        pct(&lags, 0.5) * 1e3,
        pct(&lags, 0.99) * 1e3,
        pct(&lags, 1.0) * 1e3
    );
    shutdown.cancel();
    let _ = worker.await;
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis, &prefix);
}
