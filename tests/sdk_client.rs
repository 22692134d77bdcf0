//! The project's own Rust SDK (`matchplane-client`) end to end against
//! `matchplane dev`: a backend makes a mode and tickets, two game clients
//! search (one over the socket, one over REST polling) and are matched,
//! and the match's webhook verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::body::Bytes;
use axum::http::HeaderMap;
use futures::StreamExt;
use matchplane_client::{
    verify_webhook, verify_webhook_at, BackendClient, GameClient, NewTicket, Search, SearchMessage,
    SearchOptions, Transport, WebhookError, DEFAULT_TOLERANCE,
};
use matchplane_store::tickets::StatusMessage;
use matchplane_webhook::{signature_header, Secret};
use reqwest::header::HeaderValue;
use serde_json::json;
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
        ..Default::default()
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

// The SDK reads what the server's own code writes: every status message
// the server serialises, and every signature header its signer makes.

#[test]
fn every_server_message_is_a_known_message() {
    let server = [
        StatusMessage::Searching {
            ticket_id: "tkt_1".into(),
            game_mode: "duel".into(),
            queued_at: "2026-12-01T10:00:00.000Z".into(),
        },
        StatusMessage::Status {
            wait_seconds: 1.5,
            ping_ms: Some(12.0),
            waiting_reason: Some(json!({"code": "NO_CANDIDATES"})),
            found: Some(4),
            needed: Some(10),
            role_waits: None,
        },
        StatusMessage::Matched {
            match_: matchplane_matchmaker::RawJson::of(
                &json!({"matchId": "mat_1", "teams": [["a"], ["b"]]}),
            )
            .unwrap(),
        },
        StatusMessage::Failed {
            code: "GAME_MODE_DISABLED".into(),
            message: "off".into(),
        },
        StatusMessage::Cancelled,
        StatusMessage::Expired {
            reason: Some("PONG_TIMEOUT".into()),
        },
        StatusMessage::Expired { reason: None },
        StatusMessage::Proposed {
            match_id: "mat_1".into(),
            accept_by: "2026-12-01T10:00:20.000Z".into(),
            accept_in_seconds: 20.0,
            teams: vec![vec!["a".into()], vec!["b".into()]],
            attributes: Default::default(),
        },
        StatusMessage::Requeued {
            match_id: Some("mat_1".into()),
        },
        StatusMessage::Requeued { match_id: None },
        StatusMessage::Assigned {
            connection: "203.0.113.7:7777".into(),
            data: json!({"map": "dust"}),
        },
        StatusMessage::AssignmentTimeout,
    ];
    for message in server {
        let json = message.to_json();
        let parsed = SearchMessage::parse(&json);
        assert!(!matches!(parsed, SearchMessage::Unknown(_)), "{json}");
        let wire: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed.kind(), wire["type"], "{json}");
        assert_eq!(
            parsed.ends_search(),
            message.is_final() && parsed.kind() != "matched"
        );
    }
}

fn headers(id: &str, timestamp: i64, signature: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("webhook-id", HeaderValue::from_str(id).unwrap());
    h.insert(
        "webhook-timestamp",
        HeaderValue::from_str(&timestamp.to_string()).unwrap(),
    );
    h.insert(
        "webhook-signature",
        HeaderValue::from_str(signature).unwrap(),
    );
    h
}

#[test]
fn the_servers_signatures_verify_during_a_rotation_and_within_the_window() {
    let old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let new = matchplane_webhook::generate_secret(&mut rand_source());
    let body = br#"{"type":"match.made","matchId":"mat_1"}"#;
    let both = [
        Secret::parse(new.as_str()).unwrap(),
        Secret::parse(old).unwrap(),
    ];
    let h = headers(
        "mat_1",
        1_000_000,
        &signature_header(&both, "mat_1", 1_000_000, body),
    );
    for secret in [old, new.as_str()] {
        verify_webhook_at(secret, &h, body, 1_000_000, DEFAULT_TOLERANCE).unwrap();
        verify_webhook_at(secret, &h, body, 1_000_000 + 300, DEFAULT_TOLERANCE).unwrap();
        assert_eq!(
            verify_webhook_at(secret, &h, body, 1_000_000 + 301, DEFAULT_TOLERANCE),
            Err(WebhookError::Expired)
        );
        assert_eq!(
            verify_webhook_at(secret, &h, body, 1_000_000 - 301, DEFAULT_TOLERANCE),
            Err(WebhookError::Expired)
        );
    }
    let third = "whsec_dGhpcmQgc2VjcmV0IGtleSBieXRlcw==";
    assert_eq!(
        verify_webhook_at(third, &h, body, 1_000_000, DEFAULT_TOLERANCE),
        Err(WebhookError::Signature)
    );
    // Another id or timestamp than the one signed fails.
    let sig = h["webhook-signature"].to_str().unwrap().to_owned();
    let moved = headers("mat_2", 1_000_000, &sig);
    assert!(verify_webhook_at(old, &moved, body, 1_000_000, DEFAULT_TOLERANCE).is_err());
    let later = headers("mat_1", 1_000_001, &sig);
    assert!(verify_webhook_at(old, &later, body, 1_000_000, DEFAULT_TOLERANCE).is_err());
    let mut none = h.clone();
    none.remove("webhook-id");
    assert_eq!(
        verify_webhook_at(old, &none, body, 1_000_000, DEFAULT_TOLERANCE),
        Err(WebhookError::MissingHeader("webhook-id"))
    );
    assert_eq!(
        verify_webhook_at("nope", &h, body, 1_000_000, DEFAULT_TOLERANCE),
        Err(WebhookError::Secret)
    );
}

fn rand_source() -> impl rand::RngCore {
    use rand::SeedableRng;
    rand::rngs::StdRng::seed_from_u64(21)
}

#[test]
fn the_sdk_speaks_the_documents_api_version() {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../openapi/openapi.json")).unwrap();
    assert_eq!(doc["info"]["version"], matchplane_client::API_VERSION);
    assert!(include_str!("../sdk/rust/README.md")
        .contains(&format!("API version {}", matchplane_client::API_VERSION)));
}
