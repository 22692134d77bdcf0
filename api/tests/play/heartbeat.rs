//! The client's heartbeat (docs/searching.md, "Ping, Pong and the pong
//! timeout"): a `{"type":"ping"}` text is answered `{"type":"pong"}`, at
//! most twice a second, and changes nothing of the search.

use crate::harness::{fast, Pools};
use crate::on_both_pools;
use crate::socket::{searching_duel, Client, Searching};
use futures::{SinkExt, StreamExt};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

on_both_pools!(a_searching_socket_answers_a_ping_with_a_pong);

/// The text messages that arrive within `within`.
async fn texts_within(ws: &mut Client, within: Duration) -> Vec<String> {
    let mut out = Vec::new();
    let _ = tokio::time::timeout(within, async {
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Text(text) = message {
                out.push(text.to_string());
            }
        }
    })
    .await;
    out
}

async fn a_searching_socket_answers_a_ping_with_a_pong(pools: Pools) {
    let Searching {
        t,
        p,
        key,
        ticket,
        mut ws,
        ..
    } = searching_duel(pools, fast()).await;
    // Three at once: one answer; the others come within half a second.
    for _ in 0..3 {
        ws.send(Message::Text(r#"{"type":"ping"}"#.into()))
            .await
            .unwrap();
    }
    let heard = texts_within(&mut ws, Duration::from_millis(400)).await;
    let pongs: Vec<&String> = heard.iter().filter(|m| m.contains("pong")).collect();
    assert_eq!(pongs, [r#"{"type":"pong"}"#], "{heard:?}");
    // Half a second later the next one is answered too.
    tokio::time::sleep(Duration::from_millis(200)).await;
    ws.send(Message::Text(r#"{"type":"ping"}"#.into()))
        .await
        .unwrap();
    let heard = texts_within(&mut ws, Duration::from_millis(700)).await;
    assert!(heard.iter().any(|m| m == r#"{"type":"pong"}"#), "{heard:?}");
    // The search goes on as before.
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "searching", "{status}");
}
