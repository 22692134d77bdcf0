//! Cost of `POST …/game-modes/{name}/preview` on a pool of 100 000
//! searches in Redis: wall time per call (p50, p99) and the process's CPU
//! time per call, measured in one run.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/preview_bench REDIS_URL=redis://127.0.0.1:6379/13 \
//!   cargo run --release --example preview_bench [SEARCHES] [CALLS]
//! ```
//! It migrates the database, creates a project (a tier without limits in
//! the way), a key and a 5v5 MMR mode, adds SEARCHES (default 100 000)
//! solo searches under a fresh Redis prefix (ratings spread like a ranked
//! ladder, waits 0-60 s), then previews a tighter config CALLS times
//! (default 30), one every 0.6 s (the per-project limit is 2 a second),
//! and deletes its Redis keys.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::Method;
use bench_support::call;
use matchplane_api::play::{unix_now, PlaySettings};
use matchplane_store::pool::{ModeKey, Search};
use serde_json::{json, Value};
use std::time::Instant;

#[path = "bench_support/mod.rs"]
mod bench_support;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// User plus system CPU time of this process (seconds), from /proc.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 (1-based), in clock ticks (100 Hz).
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn mode(base: f64, mult: f64) -> Value {
    json!({"name": "ranked", "enabled": true, "matchShape": [5, 5],
        "matchmakingCycleDurationSeconds": 2,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": base, "expansionMultiplier": mult},
        "ticketTtlSeconds": 3600})
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let searches: usize = args.get(1).map_or(100_000, |a| a.parse().unwrap());
    let calls: usize = args.get(2).map_or(30, |a| a.parse().unwrap());
    let prefix = format!("mppv_{}", ulid::Ulid::new());
    let bench = bench_support::start(&prefix, PlaySettings::default(), None).await;
    let (app, play, project, key) = (bench.app, bench.play, bench.project, bench.key);
    call(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/game-modes"),
        &key,
        mode(5.0, 2.0),
    )
    .await;

    // The pool: ratings around 1500 (sum of uniforms), waits 0-60 s.
    let pool_key = ModeKey::new(&project, "ranked");
    let now = unix_now();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut all = Vec::with_capacity(searches);
    for i in 0..searches {
        let mmr = 300.0 + (0..6).map(|_| next()).sum::<f64>() * 400.0;
        let wait = next() * 60.0;
        all.push(Search::solo(
            format!("tkt_{i}"),
            format!("p{i}"),
            mmr.clamp(0.0, 3000.0),
            now - wait,
        ));
    }
    let started = Instant::now();
    for chunk in all.chunks(500) {
        let adds = chunk.iter().map(|s| {
            let pool = play.pool.clone();
            let pool_key = pool_key.clone();
            let s = s.clone();
            async move {
                pool.add_search(&pool_key, &s, now + 3600.0, None)
                    .await
                    .unwrap()
            }
        });
        futures::future::join_all(adds).await;
    }
    eprintln!("{searches} searches added in {:.1?}", started.elapsed());

    let path = format!("/v1/projects/{project}/game-modes/ranked/preview");
    let mut walls = Vec::with_capacity(calls);
    let mut cpu = 0.0;
    let mut last = Value::Null;
    for _ in 0..calls {
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        let (c0, t0) = (cpu_seconds(), Instant::now());
        last = call(&app, Method::POST, &path, &key, mode(2.0, 1.5)).await;
        walls.push(t0.elapsed().as_secs_f64() * 1e3);
        cpu += cpu_seconds() - c0;
    }
    walls.sort_by(f64::total_cmp);
    let pct = |q: f64| walls[((q * walls.len() as f64).ceil() as usize).clamp(1, walls.len()) - 1];
    println!(
        "preview of {} searches, {calls} calls: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms, CPU {:.0} ms per call",
        last["poolSize"],
        pct(0.5),
        pct(0.99),
        walls[walls.len() - 1],
        cpu / calls as f64 * 1e3
    );
    println!(
        "current: {} matches, proposed: {} matches; waiting reasons {}",
        last["current"]["matches"], last["proposed"]["matches"], last["waitingReasons"]
    );
    let redis = std::env::var("REDIS_URL").expect("REDIS_URL");
    matchplane_store::pool::redis::delete_prefix_blocking(&redis, &prefix).unwrap();
}
