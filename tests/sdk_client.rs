//! The project's own Rust SDK (`matchplane-client`) end to end against
//! `matchplane dev`: a backend makes a mode and tickets, two game clients
//! search (one over the socket, one over REST polling) and are matched,
//! and the match's webhook verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::body::Bytes;
use axum::http::HeaderMap;
use futures::StreamExt;
use matchplane_client::{
    verify_webhook, BackendClient, GameClient, NewTicket, Search, SearchMessage, SearchOptions,
    Transport,
};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

async fn outcome(mut search: Search) -> Option<String> {
    while let Some(message) = search.next().await {
        if let SearchMessage::Matched { match_ } = message.unwrap() {
            return match_["matchId"].as_str().map(str::to_owned);
        }
    }
    None
}

#[tokio::test]
async fn the_rust_sdk_matches_two_players_and_verifies_the_webhook() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir().join(format!("mp-sdk-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("dev.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["dev", "--demo", "--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--database-url",
            &db,
            "--operator-token",
            "sdk-e2e-operator",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read stdout to its end on a thread, so the server never writes into a closed pipe.
    let stdout = child.stdout.take().unwrap();
    let (found, demo) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("demo: project") {
                let _ = found.send(line);
            }
        }
    });
    let line = demo.recv_timeout(Duration::from_secs(60)).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let (project, key) = (words[2].trim_end_matches(','), words[5]);
    let base = format!("http://127.0.0.1:{port}");

    let (tx, mut hooks) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |h: HeaderMap, b: Bytes| {
            let tx = tx.clone();
            async move { tx.send((h, b)).map(|_| "ok").unwrap_or("gone") }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let backend = BackendClient::new(&base, project, key).unwrap();
    let mode = backend
        .put_game_mode(
            "e2e-duel",
            &serde_json::json!({
            "name": "e2e-duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 100, "expansionMultiplier": 2},
            "webhook": {"url": hook}}),
        )
        .await
        .unwrap();
    let secret = mode["webhook"]["secret"].as_str().unwrap().to_owned();
    let mut tickets = Vec::new();
    for player in ["ana", "ben"] {
        let ticket = NewTicket {
            game_mode: "e2e-duel".into(),
            player_id: player.into(),
            attributes: Some(serde_json::json!({"mmr": 1500})),
            party: None,
        };
        tickets.push(backend.create_ticket(&ticket).await.unwrap());
    }
    let game = GameClient::new(&base).unwrap();
    let rest = game.clone().with_options(SearchOptions {
        transport: Transport::Rest,
        poll_interval: Duration::from_millis(500),
    });
    let a = game.search(&tickets[0].token).await.unwrap();
    let b = rest.search(&tickets[1].token).await.unwrap();
    let both = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(outcome(a), outcome(b))
    });
    let (a, b) = both.await.unwrap();
    assert!(a.is_some() && a == b, "{a:?} {b:?}");
    let (headers, body) = tokio::time::timeout(Duration::from_secs(20), hooks.recv())
        .await
        .unwrap()
        .unwrap();
    verify_webhook(&secret, &headers, &body).unwrap();
    let event: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(event["matchId"].as_str(), a.as_deref());

    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
