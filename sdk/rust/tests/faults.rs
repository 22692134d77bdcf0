//! A search over a network that fails as real ones do: a server that takes
//! connections and never answers (the socket's opening fails within
//! `open_timeout`), and an open socket gone silent (the search ends with a
//! timed-out error within `silence_timeout`). Before, both waited for good.
//! And a server that stops (a rolling restart) ends the search with
//! [`Error::Closed`] `1001`, search again: before, the stream just ended,
//! as if the search were over.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use futures::StreamExt;
use matchplane_client::{BackendClient, Error, GameClient, NewTicket, SearchOptions, Transport};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::test]
async fn a_server_that_never_answers_fails_the_start_in_time() {
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let game = GameClient::new(&format!("http://{addr}"))
        .unwrap()
        .with_options(SearchOptions {
            transport: Transport::WebSocket,
            open_timeout: Duration::from_millis(500),
            ..SearchOptions::default()
        });
    let started = Instant::now();
    let refused = tokio::time::timeout(Duration::from_secs(20), game.search("prj_x.duel.tkt_x.s"))
        .await
        .expect("the start gave up in time");
    assert!(refused.is_err());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// Copies `from` to `to` until the flag is set; then silent, never closed.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    stranded: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 || stranded.load(Ordering::SeqCst) || to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    std::future::pending::<()>().await;
}

/// Relays 127.0.0.1:`port` until the returned flag is set; then every
/// connection goes silent, left open.
async fn stranding_proxy(port: u16) -> (u16, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap().port();
    let stranded = Arc::new(AtomicBool::new(false));
    let flag = stranded.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let (cr, cw) = client.into_split();
            let (ur, uw) = upstream.into_split();
            tokio::spawn(pump(cr, uw, flag.clone()));
            tokio::spawn(pump(ur, cw, flag.clone()));
        }
    });
    (local, stranded)
}

#[tokio::test]
async fn a_socket_gone_silent_ends_the_search_in_time() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("silent", &common::duel("silent", "http://127.0.0.1:9/hook"))
        .await
        .unwrap();
    let ticket = backend
        .create_ticket(&NewTicket {
            game_mode: "silent".into(),
            player_id: "p1".into(),
            attributes: Some(json!({"mmr": 1500})),
            party: None,
        })
        .await
        .unwrap();
    let port = url::Url::parse(&dev.base).unwrap().port().unwrap();
    let (via, stranded) = stranding_proxy(port).await;
    let game = GameClient::new(&format!("http://127.0.0.1:{via}"))
        .unwrap()
        .with_options(SearchOptions {
            transport: Transport::WebSocket,
            silence_timeout: Duration::from_millis(1500),
            ..SearchOptions::default()
        });
    let mut search = game.search(&ticket.token).await.unwrap();
    let first = search.next().await.unwrap().unwrap();
    assert_eq!(first.kind(), "searching");
    stranded.store(true, Ordering::SeqCst);
    let started = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match search.next().await {
                Some(Ok(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the search ended in time");
    assert!(matches!(ended, Some(Err(_))), "{ended:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_server_that_stops_ends_the_search_with_1001() {
    let mut dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("stops", &common::duel("stops", "http://127.0.0.1:9/hook"))
        .await
        .unwrap();
    let ticket = backend
        .create_ticket(&NewTicket {
            game_mode: "stops".into(),
            player_id: "p1".into(),
            attributes: Some(json!({"mmr": 1500})),
            party: None,
        })
        .await
        .unwrap();
    let game = GameClient::new(&dev.base)
        .unwrap()
        .with_options(SearchOptions {
            transport: Transport::WebSocket,
            ..SearchOptions::default()
        });
    let mut search = game.search(&ticket.token).await.unwrap();
    let first = search.next().await.unwrap().unwrap();
    assert_eq!(first.kind(), "searching");
    let stopping = tokio::task::spawn_blocking(move || dev.terminate());
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match search.next().await {
                Some(Ok(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the search ended in time");
    stopping.await.unwrap();
    let Some(Err(error)) = ended else {
        panic!("the search ended as if it were over: {ended:?}");
    };
    assert!(
        matches!(error, Error::Closed { code: 1001, .. }),
        "{error:?}"
    );
    assert!(error.search_again());
}
