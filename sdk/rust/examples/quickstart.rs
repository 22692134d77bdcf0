//! A backend that creates a mode and two tickets and verifies its webhook,
//! and two game clients that search and accept.
//! Run: `MATCHPLANE_URL=http://127.0.0.1:8080 PROJECT=prj_… KEY=mp_sk_… cargo run -p matchplane-client --example quickstart`
use axum::{body::Bytes, extract::State, http::HeaderMap, http::StatusCode, routing::post};
use futures::StreamExt;
use matchplane_client::{verify_webhook, BackendClient, GameClient, NewTicket, SearchMessage};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::timeout;

type Error = Box<dyn std::error::Error>;

/// How long the example waits for the match, and then for its webhook.
const WAIT: Duration = Duration::from_secs(30);

/// The studio's webhook endpoint: verify the raw bytes, then read them.
async fn on_webhook(
    State((secret, tx)): State<(String, mpsc::UnboundedSender<Value>)>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    if verify_webhook(&secret, &headers, &body).is_err() {
        return StatusCode::UNAUTHORIZED;
    }
    let _ = tx.send(serde_json::from_slice(&body).unwrap_or_default());
    StatusCode::NO_CONTENT
}

/// One player: search with the token, accept the proposal, answer the match id.
async fn play(base: &str, token: &str) -> Result<String, Error> {
    let mut search = GameClient::new(base)?.search(token).await?;
    while let Some(message) = search.next().await {
        match message? {
            SearchMessage::Status(s) => println!("  waiting {:.0} s", s.wait_seconds),
            // The other player may decline first: their `requeued` follows, and
            // an answer that came too late is no reason to leave the queue.
            SearchMessage::Proposed(_) => match search.accept().await {
                Err(e) if matches!(e.code(), Some("NOT_PROPOSED" | "PROPOSAL_CLOSED")) => {}
                answered => answered?,
            },
            SearchMessage::Matched { match_ } => {
                return Ok(match_["matchId"].as_str().unwrap_or_default().into())
            }
            other if other.ends_search() => return Err(format!("ended {}", other.kind()).into()),
            _ => {}
        }
    }
    Err("the search closed".into())
}

pub async fn run(base: &str, project: &str, key: &str) -> Result<(), Error> {
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
            "acceptance": {"timeoutSeconds": 20},
            "webhook": {"url": hook}}),
        )
        .await?;
    println!("mode {} version {}", mode["name"], mode["version"]);
    // Only a PUT that creates the mode shows its webhook secret; one that
    // replaces it (this example's second run) masks it. A rotation shows a
    // new secret every time, and it signs at once.
    let rotated = backend.rotate_webhook_secret("quickstart").await?;
    let secret = rotated["webhook"]["secret"].as_str().ok_or("no secret")?;
    let (tx, mut verified) = mpsc::unbounded_channel();
    let app = axum::Router::new()
        .route("/matchplane", post(on_webhook))
        .with_state((secret.to_owned(), tx));
    let receiver = tokio::spawn(async move { axum::serve(listener, app).await });

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
    let both = async { tokio::join!(play(base, &tokens[0]), play(base, &tokens[1])) };
    let (ana, ben) = timeout(WAIT, both).await.map_err(|_| "no match in 30 s")?;
    let (ana, ben) = (ana?, ben?);
    println!("ana: matched {ana}\nben: matched {ben}");
    // This match's `match.made`, once its signature verified.
    let webhook = async {
        while let Some(event) = verified.recv().await {
            if event["matchId"] == ana.as_str() {
                return Some(event);
            }
        }
        None
    };
    let event = timeout(WAIT, webhook).await.ok().flatten();
    receiver.abort();
    let event = event.ok_or("no verified webhook for the match in 30 s")?;
    println!("webhook {} for {ana} verified", event["type"]);
    Ok(())
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Error> {
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    run(&env("MATCHPLANE_URL"), &env("PROJECT"), &env("KEY")).await
}
