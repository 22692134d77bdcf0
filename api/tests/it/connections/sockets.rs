//! The connection cap counts WebSocket searches for as long as they are
//! open (docs/configuration.md, `--max-connections`): with the cap full of
//! open sockets a new connection waits in the backlog, and is served once
//! one socket closes.
//!
//! Before: a connection's slot was freed when hyper handed the socket over
//! to the WebSocket, so any number of WebSockets stayed open on a cap of
//! 2 and new requests were still served beside them.

use super::{raw, read_until_closed, serve_with};
use crate::common::OPERATOR;
use futures::{SinkExt, StreamExt};
use matchplane_api::{ApiConfig, ConnectionLimits, ServeConfig};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

type Client =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// `POST path` of `body` as the operator; asserts `201` and returns the body.
async fn create(addr: SocketAddr, path: &str, body: Value) -> Value {
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {OPERATOR}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = raw(addr, request.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}

/// Opens a WebSocket search of `token`; returns it once it said `searching`.
async fn search(addr: SocketAddr, token: &str) -> Client {
    let (mut ws, _) =
        tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
            .await
            .expect("websocket upgrade");
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a message within 5 s")
            .expect("socket open")
            .expect("no error");
        if let Message::Text(text) = message {
            assert!(text.contains("\"searching\""), "{text}");
            return ws;
        }
    }
}

/// Two WebSocket searches on a cap of 2 leave no room for a third
/// connection: its request is not answered while they are open, and is
/// once one of them closes.
#[tokio::test]
async fn websocket_searches_hold_their_connection_slots_until_they_close() {
    let (addr, _db, _stop) = serve_with(ServeConfig {
        api: ApiConfig {
            operator_token: Some(OPERATOR.to_owned()),
            operator_token_previous: None,
            ..ApiConfig::default()
        },
        connections: ConnectionLimits {
            max_connections: 2,
            ..ConnectionLimits::default()
        },
        ..ServeConfig::default()
    })
    .await;
    let project = create(
        addr,
        "/v1/projects",
        json!({"name": "Studio", "tier": "free"}),
    )
    .await;
    let project = project["id"].as_str().unwrap();
    let mode = json!({
        "name": "duel",
        "enabled": true,
        "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 5,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
        "ticketTtlSeconds": 600
    });
    create(addr, &format!("/v1/projects/{project}/game-modes"), mode).await;
    let mut sockets = Vec::new();
    for player in ["ana", "bo"] {
        let ticket = json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": 1500}});
        let ticket = create(addr, &format!("/v1/projects/{project}/tickets"), ticket).await;
        sockets.push(search(addr, ticket["token"].as_str().unwrap()).await);
    }

    let mut third = TcpStream::connect(addr).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = read_until_closed(&mut third, Duration::from_millis(500)).await;
    assert!(
        answer.is_empty(),
        "served while two WebSockets hold the cap of 2: {answer}"
    );

    let mut first = sockets.remove(0);
    first.send(Message::Close(None)).await.unwrap();
    // The server answers the Close and drops the socket.
    while let Ok(Some(Ok(_))) = tokio::time::timeout(Duration::from_secs(5), first.next()).await {}
    let (answer, _) = read_until_closed(&mut third, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    drop(sockets);
}
