//! A socket whose client answers every Ping is never ended `PONG_TIMEOUT`
//! because Redis was slow: the time the socket's loop spent waiting on the
//! stores, its client's pongs unread meanwhile, is not the client's silence
//! (docs/searching.md). Before, a Redis stall of a few seconds ended
//! healthy sockets `expired` with `PONG_TIMEOUT` (a fault probe: 8 sockets
//! in a 15 s `CLIENT PAUSE`).

use crate::fault_proxy::FaultProxy;
use crate::harness::solo;
use crate::outages::{app_waiting, database, redis_through_proxy, send, studio};
use axum::http::{Method, StatusCode};
use futures::{SinkExt, StreamExt};
use matchplane_api::play::PlaySettings;
use matchplane_store::test_support::TestDatabase;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// An app on Redis through a proxy (its commands waiting `wait` for an
/// answer), served, with one WebSocket search open: the proxy, the app,
/// the project, its key, the search's ticket id and its socket. The
/// database lives as long as the returned guard.
async fn one_socket(settings: PlaySettings, wait: Duration) -> (Socketed, Socket) {
    let (proxy, via) = redis_through_proxy().await;
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, database) = database(None).await;
    let deadline = Duration::from_secs(10);
    let app = app_waiting(&db_url, &via, &prefix, deadline, settings, wait).await;
    let (project, key) = studio(&app).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await });
    let tickets = format!("/v1/projects/{project}/tickets");
    let body = Some(solo("duel", "a"));
    let made = send(&app, Method::POST, &tickets, Some(&key), body).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let token = made.body["token"].as_str().unwrap();
    let id = made.body["ticketId"].as_str().unwrap().to_owned();
    let url = format!("ws://{addr}/v1/search?ticket={token}");
    let (socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let socketed = Socketed {
        proxy,
        app,
        project,
        key,
        id,
        _database: database,
    };
    (socketed, socket)
}

/// A client's end of a search socket.
type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// What [`one_socket`] set up, but the socket.
struct Socketed {
    proxy: FaultProxy,
    app: axum::Router,
    project: String,
    key: String,
    id: String,
    _database: TestDatabase,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_redis_does_not_end_a_socket_that_answers_its_pings() {
    // Redis commands wait 1 s for an answer, longer than half the pong
    // timeout: a tick's check and a pong's record, each cut at 1 s, hold
    // the loop past the pong timeout.
    let settings = PlaySettings {
        rest_poll_timeout: Duration::from_secs(1),
        ping_interval: Duration::from_millis(100),
        pong_timeout: Duration::from_millis(1500),
        socket_lease: Duration::from_secs(60),
    };
    let (set, mut socket) = one_socket(settings, Duration::from_secs(1)).await;
    let Socketed {
        proxy,
        app,
        project,
        key,
        id,
        ..
    } = &set;
    // The client reads all the time, so its library answers every Ping.
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let noted = heard.clone();
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = socket.next().await {
            if let Ok(text) = message.into_text() {
                noted.lock().unwrap().push(text.to_string());
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;

    // Redis answers nothing for 4 s, then everything held goes on.
    proxy.stall();
    tokio::time::sleep(Duration::from_secs(4)).await;
    proxy.resume();
    tokio::time::sleep(Duration::from_secs(3)).await;

    let messages = heard.lock().unwrap().clone();
    assert!(
        !messages.iter().any(|m| m.contains("\"expired\"")),
        "ended although its client answered: {messages:?}"
    );
    let status = send(
        app,
        Method::GET,
        &format!("/v1/projects/{project}/tickets/{id}"),
        Some(key),
        None,
    )
    .await;
    assert_eq!(status.body["status"], "searching", "{}", status.body);
    reader.abort();
}

/// While Redis answers nothing, the socket's loop waits on its re-read (up
/// to the command timeout, 5 s by default, for each of its reads) but
/// keeps sending Pings and answering the client's `ping`s: a client
/// watching for silence (a browser's, Unity's) does not take a stall of
/// the stores for a dead path. Before, both stopped for as long as the
/// loop waited (a fault probe saw up to 15 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_redis_leaves_the_heartbeat_going() {
    let settings = PlaySettings {
        rest_poll_timeout: Duration::from_secs(1),
        ping_interval: Duration::from_millis(200),
        pong_timeout: Duration::from_secs(10),
        socket_lease: Duration::from_secs(60),
    };
    let (set, socket) = one_socket(settings, Duration::from_secs(5)).await;
    let proxy = &set.proxy;
    let (mut write, mut read) = socket.split();
    // When each Ping frame and each `pong` came.
    let pings: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let pongs: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let (noted_pings, noted_pongs) = (pings.clone(), pongs.clone());
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = read.next().await {
            match message {
                Message::Ping(_) => noted_pings.lock().unwrap().push(Instant::now()),
                Message::Text(text) if text.contains("\"pong\"") => {
                    noted_pongs.lock().unwrap().push(Instant::now());
                }
                _ => {}
            }
        }
    });
    // The client's heartbeat: a `ping` every 600 ms (each one answered:
    // pongs go out at most twice a second).
    let writer = tokio::spawn(async move {
        loop {
            let ping = Message::text(r#"{"type":"ping"}"#);
            if write.send(ping).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(600)).await;
        }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;

    let stalled = Instant::now();
    proxy.stall();
    tokio::time::sleep(Duration::from_secs(6)).await;
    proxy.resume();
    let resumed = Instant::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    writer.abort();
    reader.abort();

    // The longest time without one, from the stall to its end.
    let longest_gap = |times: &[Instant]| {
        let mut marks: Vec<Instant> = times
            .iter()
            .copied()
            .filter(|t| *t > stalled && *t < resumed)
            .collect();
        marks.insert(0, stalled);
        marks.push(resumed);
        marks.windows(2).map(|w| w[1] - w[0]).max().unwrap()
    };
    let ping_gap = longest_gap(&pings.lock().unwrap());
    let pong_gap = longest_gap(&pongs.lock().unwrap());
    assert!(
        ping_gap < Duration::from_millis(1500),
        "no Ping frame for {ping_gap:?} while Redis stalled"
    );
    assert!(
        pong_gap < Duration::from_millis(1500),
        "no pong for {pong_gap:?} while Redis stalled"
    );
}
