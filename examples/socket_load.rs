//! Holds many open searches against a running matchplane and reports the
//! server's memory per search (issue "Scale-out", memory per open search).
//!
//! ```text
//! scripts/socket-load [SOCKETS] [REST]
//! ```
//! runs it against a fresh `matchplane dev`; by hand:
//! ```text
//! MATCHPLANE_URL=http://127.0.0.1:8080 MATCHPLANE_OPERATOR_TOKEN=… SERVER_PID=… \
//!   cargo run --release --example socket_load -- 18000 0
//! ```
//!
//! It creates a tier with room for the load, a project, a key and an MMR
//! mode in which nobody can match (every player has an MMR of their own,
//! tolerance 0, no widening), makes a ticket per search, then opens
//! `SOCKETS` WebSocket searches (spread over the local addresses
//! 127.0.0.2-127.0.0.17: one address reaches one port some 28 000 times)
//! and `REST` REST searches, answering the server's pings. The server's
//! resident memory (`VmRSS` of `SERVER_PID`) and, with `REDIS_URL`, Redis's
//! `used_memory` are read before the searches, once all are open, and after
//! 10 s of holding them; it prints the growth per search. Every search is
//! checked still open at the end (a socket that closed, or a REST search
//! not `searching`, fails the run).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpSocket;
use tokio_tungstenite::tungstenite::Message;

/// Local source addresses the sockets are spread over.
const SOURCES: u8 = 16;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is required"))
}

/// `VmRSS` of `pid` in bytes.
fn rss(pid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// Redis's `used_memory` in bytes, when `REDIS_URL` is set.
fn redis_used() -> Option<u64> {
    let url = std::env::var("REDIS_URL").ok()?;
    let out = std::process::Command::new("redis-cli")
        .args(["-u", &url, "info", "memory"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    auth: &str,
    body: Value,
) -> Value {
    let mut request = http.request(method, url);
    if !auth.is_empty() {
        request = request.header("Authorization", auth);
    }
    if !body.is_null() {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{url}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Whether `SOCKET_LOAD_ATTRIBUTES=five`: the mode declares the five
/// attributes and rules of docs/rules.md's example and every ticket sends
/// them (for the memory a search's attributes cost).
fn five_attributes() -> bool {
    std::env::var("SOCKET_LOAD_ATTRIBUTES").is_ok_and(|v| v == "five")
}

/// The `attributes` and `rules` blocks of docs/rules.md's example.
fn five_declared() -> (serde_json::Value, serde_json::Value) {
    (
        json!({
            "build":   { "type": "string" },
            "pool":    { "type": "string", "default": "crossplay" },
            "maps":    { "type": "stringSet", "values": ["dust", "inferno", "nuke"] },
            "level":   { "type": "number", "min": 1, "max": 100, "party": "max" },
            "blocked": { "type": "playerSet", "default": [] }
        }),
        json!([
            { "name": "same-build", "type": "equal", "attribute": "build" },
            { "name": "platform", "type": "equal", "attribute": "pool" },
            { "name": "map", "type": "intersect", "attribute": "maps" },
            { "name": "level", "type": "distance", "attribute": "level", "max": 10 },
            { "name": "no-blocked", "type": "avoid", "attribute": "blocked" }
        ]),
    )
}

/// Player `i`'s MMR and five attributes (two blocked players).
fn five_values(i: usize) -> serde_json::Value {
    json!({"mmr": i, "build": "1.4.2", "pool": "pc", "maps": ["dust", "nuke"],
           "level": 1 + i % 100,
           "blocked": [format!("player-{}", i + 1), format!("player-{}", i + 2)]})
}

/// Makes `n` tickets of distinct MMRs (from `from`), 64 at a time.
async fn tickets(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    from: usize,
    n: usize,
) -> Vec<String> {
    let auth = format!("Bearer {key}");
    futures::stream::iter(from..from + n)
        .map(|i| {
            let auth = auth.clone();
            async move {
                let mut body = json!({"gameMode": "hold", "playerId": format!("player-{i}"),
                    "attributes": {"mmr": i}});
                if five_attributes() {
                    body["attributes"] = five_values(i);
                }
                let answer = call(http, reqwest::Method::POST, url, &auth, body).await;
                answer["token"].as_str().unwrap().to_owned()
            }
        })
        .buffered(64)
        .collect()
        .await
}

/// Opens one WebSocket search from `source`, retrying a `503` (a
/// dependency slow under the load) after a second, up to 30 times.
async fn connect(
    source: IpAddr,
    server: SocketAddr,
    url: &str,
) -> tokio_tungstenite::WebSocketStream<tokio::net::TcpStream> {
    for _ in 0..30 {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(source, 0)).unwrap();
        let stream = socket.connect(server).await.unwrap();
        match tokio_tungstenite::client_async(url, stream).await {
            Ok((ws, _)) => return ws,
            Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 503 => {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(err) => panic!("{url}: {err}"),
        }
    }
    panic!("{url}: still 503 after 30 tries")
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let sockets: usize = args.next().map_or(18_000, |a| a.parse().unwrap());
    let rest: usize = args.next().map_or(0, |a| a.parse().unwrap());
    let base = env("MATCHPLANE_URL");
    let operator = format!("Bearer {}", env("MATCHPLANE_OPERATOR_TOKEN"));
    let pid = env("SERVER_PID");
    let http = reqwest::Client::new();
    let total = sockets + rest;

    call(
        &http,
        reqwest::Method::PUT,
        &format!("{base}/v1/tiers/load"),
        &operator,
        json!({"minCycleDurationSeconds": 0.1, "minBaseTolerance": 0,
               "minExpansionMultiplier": 1, "maxMatchSize": 200, "maxGameModes": 100,
               "maxConcurrentSearches": 10_000_000, "requestsPerSecond": 10_000_000,
               "maxPendingTickets": 1_000_000_000_u64}),
    )
    .await;
    let project = call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/v1/projects"),
        &operator,
        json!({"name": "socket-load", "tier": "load"}),
    )
    .await;
    let project = project["id"].as_str().unwrap().to_owned();
    let key = call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/v1/projects/{project}/keys"),
        &operator,
        json!({"name": "load"}),
    )
    .await;
    let key = key["key"].as_str().unwrap().to_owned();
    call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/v1/projects/{project}/game-modes"),
        &format!("Bearer {key}"),
        {
            let mut mode = json!({"name": "hold", "enabled": true, "matchShape": [1, 1],
                "matchmakingCycleDurationSeconds": 1,
                "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 10_000_000,
                              "baseTolerance": 0, "expansionMultiplier": 1},
                "ticketTtlSeconds": 3600});
            if five_attributes() {
                (mode["attributes"], mode["rules"]) = five_declared();
            }
            mode
        },
    )
    .await;
    let tickets_url = format!("{base}/v1/projects/{project}/tickets");
    // Each player's MMR is their own: tolerance 0 never joins two.
    let started = Instant::now();
    let tokens = tickets(&http, &tickets_url, &key, 0, total).await;
    println!(
        "{total} tickets in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    tokio::time::sleep(Duration::from_secs(2)).await;
    let (rss0, redis0) = (rss(&pid), redis_used());
    println!("before: server RSS {} MB", rss0 / 1_000_000);

    let ws_base = base.replacen("http", "ws", 1);
    let server: SocketAddr = base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let open = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut holders = Vec::with_capacity(sockets);
    for (i, token) in tokens[..sockets].iter().enumerate() {
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (i % SOURCES as usize) as u8));
        let url = format!("{ws_base}/v1/search?ticket={token}");
        let (open, closed) = (open.clone(), closed.clone());
        let mut ws = connect(source, server, &url).await;
        open.fetch_add(1, Ordering::Relaxed);
        holders.push(tokio::spawn(async move {
            // Reading answers the server's pings (tungstenite queues the
            // pong; the flush sends it).
            while let Some(message) = ws.next().await {
                match message {
                    Ok(Message::Ping(_)) => {
                        let _ = ws.flush().await;
                    }
                    Ok(Message::Text(text)) => {
                        let v: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                        if v["type"] != "searching" && v["type"] != "status" {
                            eprintln!("socket {i}: {text}");
                            break;
                        }
                    }
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            closed.fetch_add(1, Ordering::Relaxed);
        }));
        if (i + 1) % 2000 == 0 {
            println!("{} sockets open", i + 1);
        }
    }
    let rest_tokens = &tokens[sockets..];
    futures::stream::iter(rest_tokens)
        .map(|token| {
            let http = &http;
            let base = &base;
            async move {
                call(
                    http,
                    reqwest::Method::POST,
                    &format!("{base}/v1/searches"),
                    "",
                    json!({"ticket": token}),
                )
                .await;
            }
        })
        .buffered(64)
        .collect::<Vec<_>>()
        .await;
    println!(
        "{sockets} sockets and {rest} REST searches open in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let (rss1, redis1) = (rss(&pid), redis_used());
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (rss2, redis2) = (rss(&pid), redis_used());
    let held = open.load(Ordering::Relaxed) - closed.load(Ordering::Relaxed);
    println!("held: {held} of {sockets} sockets after 10 s");
    println!(
        "server RSS: before {} MB, all open {} MB, after 10 s {} MB",
        rss0 / 1_000_000,
        rss1 / 1_000_000,
        rss2 / 1_000_000
    );
    let grown = rss2.saturating_sub(rss0);
    println!(
        "server RSS growth per search: {:.1} KB",
        grown as f64 / total.max(1) as f64 / 1000.0
    );
    if let (Some(r0), Some(_r1), Some(r2)) = (redis0, redis1, redis2) {
        println!(
            "Redis used_memory growth per search: {:.0} bytes",
            r2.saturating_sub(r0) as f64 / total.max(1) as f64
        );
    }
    // Every REST search is still searching (one poll each keeps it alive too).
    let mut not_searching = 0;
    for token in rest_tokens {
        let ticket = token.split('.').nth(2).unwrap();
        let status = call(
            &http,
            reqwest::Method::GET,
            &format!("{base}/v1/searches/{ticket}"),
            &format!("Ticket {token}"),
            Value::Null,
        )
        .await;
        if status["status"] != "searching" {
            not_searching += 1;
        }
    }
    assert_eq!(held, sockets, "sockets closed by the server");
    assert_eq!(not_searching, 0, "REST searches not searching");
    println!("ok");
    std::process::exit(0);
}
