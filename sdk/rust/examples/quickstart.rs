//! A backend that creates a mode and two tickets and verifies its webhook,
//! and two game clients that search and accept.
//! Run: `MATCHPLANE_URL=http://127.0.0.1:8080 PROJECT=prj_… KEY=mp_sk_… cargo run -p matchplane-client --example quickstart`
use axum::{body::Bytes, extract::State, http::HeaderMap, http::StatusCode, routing::post};
use futures::StreamExt;
use matchplane_client::{verify_webhook, BackendClient, GameClient, NewTicket, SearchMessage};
use serde_json::json;
use tokio::sync::mpsc;

type Verified = mpsc::UnboundedSender<String>;

/// The studio's webhook endpoint: verify the raw bytes, then read them.
async fn on_webhook(
    State((secret, tx)): State<(String, Verified)>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    if verify_webhook(&secret, &headers, &body).is_err() {
        return StatusCode::UNAUTHORIZED;
    }
    let event: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let _ = tx.send(format!(
        "webhook {} {} verified",
        event["type"], event["matchId"]
    ));
    StatusCode::NO_CONTENT
}

/// One player: search with the token, accept any proposal, return the outcome.
async fn play(base: &str, token: &str) -> Result<String, matchplane_client::Error> {
    let mut search = GameClient::new(base)?.search(token).await?;
    while let Some(message) = search.next().await {
        match message? {
            SearchMessage::Status(s) => println!("  waiting {:.0} s", s.wait_seconds),
            SearchMessage::Proposed(_) => search.accept().await?,
            SearchMessage::Matched { match_ } => {
                return Ok(format!("matched {}", match_["matchId"]))
            }
            other if other.ends_search() => return Ok(other.kind().to_owned()),
            _ => {}
        }
    }
    Ok("closed".into())
}

pub async fn run(base: &str, project: &str, key: &str) -> Result<(), Box<dyn std::error::Error>> {
    let backend = BackendClient::new(base, project, key)?;
    // The webhook receiver, on a port of its own.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let hook = format!("http://{}/matchplane", listener.local_addr()?);
    let mode = backend
        .put_game_mode(
            "quickstart",
            &json!({
            "name": "quickstart", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 100, "expansionMultiplier": 2},
            "webhook": {"url": hook}}),
        )
        .await?;
    println!("mode {} version {}", mode["name"], mode["version"]);
    let secret = mode["webhook"]["secret"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (tx, mut verified) = mpsc::unbounded_channel();
    let app = axum::Router::new()
        .route("/matchplane", post(on_webhook))
        .with_state((secret, tx));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let mut tokens = Vec::new();
    for (player, mmr) in [("ana", 1500), ("ben", 1520)] {
        let ticket = NewTicket {
            game_mode: "quickstart".into(),
            player_id: player.into(),
            attributes: Some(json!({ "mmr": mmr })),
            party: None,
        };
        let created = backend.create_ticket(&ticket).await?;
        println!("ticket {} for {player}", created.ticket_id);
        tokens.push(created.token); // hand this to the player's game client
    }
    let (a, b) = tokio::join!(play(base, &tokens[0]), play(base, &tokens[1]));
    println!("ana: {}\nben: {}", a?, b?);
    if let Some(line) = verified.recv().await {
        println!("{line}");
    }
    Ok(())
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    run(&env("MATCHPLANE_URL"), &env("PROJECT"), &env("KEY")).await
}
