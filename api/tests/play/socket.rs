//! A player's search socket as the tests drive it: connect with a ticket
//! token, read its messages, wait for one kind or for the Close.

use crate::harness::{duel, solo, Pools, TestApp};
use futures::StreamExt;
use serde_json::Value;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

pub(crate) type Client =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens `/v1/search` with a ticket token.
pub(crate) async fn connect(addr: std::net::SocketAddr, token: &str) -> Client {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
        .await
        .expect("websocket upgrade");
    ws
}

/// The next text message as JSON (answering pings at once), within 5 s.
pub(crate) async fn next_json(ws: &mut Client) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a message within 5 s")
            .expect("socket open")
            .expect("no error");
        if let Message::Text(text) = msg {
            return crate::harness::search_message(&text);
        }
    }
}

/// The next text message of type `kind` (others skipped), within 10 s in
/// all: pings and statuses keep coming.
pub(crate) async fn until(ws: &mut Client, kind: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let msg = tokio::time::timeout_at(deadline, ws.next())
            .await
            .unwrap_or_else(|_| panic!("a {kind} message within 10 s"))
            .expect("socket open")
            .expect("no error");
        if let Message::Text(text) = msg {
            let msg = crate::harness::search_message(&text);
            if msg["type"] == kind {
                return msg;
            }
        }
    }
}

/// The code of the server's Close frame (within 5 s; 1005 for a Close
/// without one); panics when the socket ends without a Close (1006).
pub(crate) async fn close_code(ws: &mut Client) -> u16 {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("the server's Close within 5 s");
        match msg {
            Some(Ok(Message::Close(frame))) => {
                return frame.map(|f| u16::from(f.code)).unwrap_or(1005);
            }
            Some(Ok(_)) => {}
            other => panic!("the socket ended without a Close frame (1006): {other:?}"),
        }
    }
}

/// A served app with a `free` project and its `duel` mode, and player
/// `p1`'s ticket searching on a socket (its `searching` read).
pub(crate) struct Searching {
    pub t: TestApp,
    pub addr: std::net::SocketAddr,
    pub p: String,
    pub key: String,
    pub ticket: String,
    pub token: String,
    pub ws: Client,
}

/// See [`Searching`].
pub(crate) async fn searching_duel(
    pools: Pools,
    settings: matchplane_api::play::PlaySettings,
) -> Searching {
    let t = TestApp::new(pools, settings).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let mut ws = connect(addr, &token).await;
    let hello = next_json(&mut ws).await;
    assert_eq!(hello["type"], "searching", "{hello}");
    assert_eq!(hello["ticketId"], ticket.as_str());
    Searching {
        t,
        addr,
        p,
        key,
        ticket,
        token,
        ws,
    }
}
