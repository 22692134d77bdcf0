//! Serves the API on Redis for a load test of ticket generation, next to a
//! bare axum JSON handler measured in the same run (README, "Benchmark").
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/8 \
//!   cargo run --release --example ticket_bench
//! ```
//! It migrates the database, creates a project (on a tier like enterprise
//! but with a rate limit out of the load's reach), a key and a
//! mode (and one declaring five attributes), writes a `wrk` script to
//! `/tmp/ticket_bench.lua` (a ticket with `mmr` only) and one to
//! `/tmp/ticket_bench_attributes.lua` (with the five attributes), and serves the API
//! on 127.0.0.1:8090 and the bare handler on 127.0.0.1:8091 until Ctrl-C.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::{Method, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use bench_support::call;
use matchplane_api::play::PlaySettings;
use serde_json::{json, Value};

#[path = "bench_support/mod.rs"]
mod bench_support;

// The allocator `matchplane` itself uses (src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    let bench = bench_support::start("mpbench", PlaySettings::default(), None).await;
    let (app, project, key) = (bench.app, bench.project, bench.key);
    let mode = json!({"name": "duel", "enabled": true, "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
        "ticketTtlSeconds": 600});
    call(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/game-modes"),
        &key,
        mode.clone(),
    )
    .await;
    // The same mode with the five attributes and rules of docs/rules.md's
    // first example (a build, a platform pool, a map vote, a level, a
    // block list).
    let mut ruled = mode.clone();
    ruled["name"] = json!("ruled");
    let example = rules_example();
    ruled["attributes"] = example["attributes"].clone();
    ruled["rules"] = example["rules"].clone();
    call(
        &app,
        Method::POST,
        &format!("/v1/projects/{project}/game-modes"),
        &key,
        ruled,
    )
    .await;
    let script = |body: &str| {
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
             wrk.headers[\"Authorization\"] = \"{key}\"\n\
             wrk.body = '{body}'\n"
        )
    };
    let plain = r#"{"gameMode":"duel","playerId":"player-81","attributes":{"mmr":1520}}"#;
    let five = r#"{"gameMode":"ruled","playerId":"player-81","attributes":{"mmr":1520,"build":"1.4.2","pool":"pc","maps":["dust","nuke"],"level":42,"blocked":["player-7","player-9"]}}"#;
    std::fs::write("/tmp/ticket_bench.lua", script(plain)).unwrap();
    std::fs::write("/tmp/ticket_bench_attributes.lua", script(five)).unwrap();
    println!("ticket URL: http://127.0.0.1:8090/v1/projects/{project}/tickets");
    println!("bare URL:   http://127.0.0.1:8091/bare");
    let bare = Router::new().route(
        "/bare",
        post(|Json(body): Json<Value>| async move {
            (
                StatusCode::CREATED,
                Json(json!({"ok": true, "got": body["playerId"]})),
            )
        }),
    );
    let api = tokio::net::TcpListener::bind("127.0.0.1:8090")
        .await
        .unwrap();
    let bare_listener = tokio::net::TcpListener::bind("127.0.0.1:8091")
        .await
        .unwrap();
    tokio::spawn(async move { axum::serve(bare_listener, bare).await.unwrap() });
    axum::serve(api, app).await.unwrap();
}

/// The `attributes` and `rules` of docs/rules.md's first example, read from
/// the page itself.
fn rules_example() -> Value {
    let page = include_str!("../docs/rules.md");
    let block = page
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("docs/rules.md opens with a JSON example");
    serde_json::from_str(&format!("{{{block}}}")).expect("the example is JSON")
}
