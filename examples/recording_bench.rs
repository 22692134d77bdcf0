//! The cost of recording searches (issue 22): ticket generation plus REST
//! search start, in one process on Redis and PostgreSQL, alternating
//! between a mode without recording and the same mode with
//! `"recording": {"enabled": true}`, in the same run.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/8 \
//!   cargo run --release --example recording_bench -- [PAIRS] [SECONDS] [TASKS]
//! ```
//! (`scripts/recording-bench` creates the database and empties Redis.)
//! Runs PAIRS (default 10) pairs of SECONDS-long (default 3) windows, off
//! then on, each with TASKS (default 32) tasks that each generate a ticket
//! for a new player and start its REST search, through the router (no
//! HTTP: the recording's share of a request is the largest it can be).
//! Prints each pair's starts per second and the ratio of the sums, and the
//! rows the recording stored and dropped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::{Method, StatusCode};
use axum::Router;
use bench_support::send;
use matchplane_api::play::PlaySettings;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "bench_support/mod.rs"]
mod bench_support;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One window: `tasks` tasks generating a ticket and starting its search in
/// `mode` for `seconds`; answers the starts per second.
async fn window(
    app: &Router,
    project: &str,
    bearer: &str,
    mode: &str,
    tasks: usize,
    seconds: f64,
    next: &Arc<AtomicU64>,
) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (app, stop, done, next) = (app.clone(), stop.clone(), done.clone(), next.clone());
        let (tickets, auth, mode) = (
            format!("/v1/projects/{project}/tickets"),
            bearer.to_owned(),
            mode.to_owned(),
        );
        handles.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let (status, ticket) = send(&app, Method::POST, &tickets, &auth,
                    json!({"gameMode": mode, "playerId": format!("p{n}"), "attributes": {"mmr": 1000 + n % 1000}})).await;
                assert_eq!(status, StatusCode::CREATED, "{ticket}");
                let token = ticket["token"].as_str().unwrap().to_owned();
                let (status, body) = send(&app, Method::POST, "/v1/searches", &auth, json!({"ticket": token})).await;
                assert_eq!(status, StatusCode::ACCEPTED, "{body}");
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pairs: usize = args.get(1).map_or(10, |a| a.parse().unwrap());
    let seconds: f64 = args.get(2).map_or(3.0, |a| a.parse().unwrap());
    let tasks: usize = args.get(3).map_or(32, |a| a.parse().unwrap());
    let bench = bench_support::start(
        "mprec",
        PlaySettings::default(),
        Some("bench-recording-key"),
    )
    .await;
    let (app, state, project, key) = (bench.app, bench.state, bench.project, bench.key);
    for (name, recording) in [("off", false), ("on", true)] {
        let mut mode = json!({"name": name, "enabled": true, "matchShape": [1, 1],
            "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
            "ticketTtlSeconds": 600});
        if recording {
            mode["recording"] = json!({"enabled": true, "retentionDays": 7});
        }
        let (status, body) = send(
            &app,
            Method::POST,
            &format!("/v1/projects/{project}/game-modes"),
            &key,
            mode,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let next = Arc::new(AtomicU64::new(0));
    // A warm-up window of each.
    window(&app, &project, &key, "off", tasks, 1.0, &next).await;
    window(&app, &project, &key, "on", tasks, 1.0, &next).await;
    let (mut sum_off, mut sum_on) = (0.0, 0.0);
    for i in 1..=pairs {
        let off = window(&app, &project, &key, "off", tasks, seconds, &next).await;
        let on = window(&app, &project, &key, "on", tasks, seconds, &next).await;
        println!(
            "pair {i:2}: off {off:8.0} starts/s  on {on:8.0} starts/s  ratio {:.3}",
            on / off
        );
        sum_off += off;
        sum_on += on;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let metrics = state.metrics.render();
    let counter = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or("0")
            .to_owned()
    };
    println!(
        "mean: off {:.0} starts/s, on {:.0} starts/s, ratio {:.3}; recorded rows stored {}, dropped {}",
        sum_off / pairs as f64,
        sum_on / pairs as f64,
        sum_on / sum_off,
        counter(matchplane_api::recording::WRITTEN_TOTAL),
        counter(matchplane_api::recording::DROPPED_TOTAL),
    );
}
