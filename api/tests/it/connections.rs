//! What one connection may hold (`serve_on` on a real socket): a head that
//! never ends, an idle kept-alive connection and a body that stops are cut
//! within their bounds; connections above the cap wait in the backlog
//! until one closes; hyper's own refusals (a bad request line, 414, 431)
//! carry problem bodies.
//!
//! Before: no header or body timeout at all (a slowloris connection stayed
//! open as long as its client liked), no cap, and those refusals had empty
//! bodies.

use crate::common::{empty_database, Backend, TestDatabase};
use matchplane_api::{ConnectionLimits, ServeConfig};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod requests;
mod sockets;

/// `serve_on` with `limits` over a migrated SQLite database and memory
/// stores; the database is kept alive with the server.
async fn serve(
    limits: ConnectionLimits,
) -> (SocketAddr, TestDatabase, tokio::sync::oneshot::Sender<()>) {
    serve_with(ServeConfig {
        connections: limits,
        ..ServeConfig::default()
    })
    .await
}

/// [`serve`] with a whole `config`.
async fn serve_with(
    config: ServeConfig,
) -> (SocketAddr, TestDatabase, tokio::sync::oneshot::Sender<()>) {
    use matchplane_api::play::{Play, PlaySettings};
    let owned = empty_database(Backend::Sqlite).await;
    let db = owned.connect().await;
    matchplane_migrations::migrate(&db).await.unwrap();
    let play = std::sync::Arc::new(Play::in_memory(PlaySettings::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(matchplane_api::serve_on(
        db,
        config,
        play,
        listener,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, owned, stop)
}

fn quick() -> ConnectionLimits {
    ConnectionLimits {
        header_read_timeout: Duration::from_millis(800),
        body_read_timeout: Duration::from_millis(800),
        max_connections: 100,
    }
}

/// Reads until the server closes the connection or `within` runs out;
/// returns what was read and whether it closed.
async fn read_until_closed(socket: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, socket.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), false),
        }
    }
}

#[tokio::test]
async fn half_a_head_is_cut_at_the_header_timeout() {
    let (addr, _db, _stop) = serve(quick()).await;
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-slow: ")
        .await
        .unwrap();
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut socket, Duration::from_secs(5)).await;
    assert!(closed, "the connection is still open after 5 s");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed() {
    let (addr, _db, _stop) = serve(quick()).await;
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let (answer, closed) = read_until_closed(&mut socket, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed, "the idle connection is still open after 5 s");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_body_that_stops_is_cut_at_the_body_timeout() {
    let (addr, _db, _stop) = serve(quick()).await;
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(
            b"POST /v1/searches HTTP/1.1\r\nhost: x\r\n\
              content-type: application/json\r\ncontent-length: 100\r\n\r\n{\"ticket\":",
        )
        .await
        .unwrap();
    let started = Instant::now();
    let (answer, closed) = read_until_closed(&mut socket, Duration::from_secs(8)).await;
    assert!(
        closed || answer.starts_with("HTTP/1.1 4"),
        "no answer and still open: {answer}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn connections_above_the_cap_wait_until_one_closes() {
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(10),
        max_connections: 2,
        ..quick()
    };
    let (addr, _db, _stop) = serve(limits).await;
    let first = TcpStream::connect(addr).await.unwrap();
    let _second = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = TcpStream::connect(addr).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = read_until_closed(&mut third, Duration::from_millis(1500)).await;
    assert!(answer.is_empty(), "answered above the cap: {answer}");
    drop(first);
    let (answer, _) = read_until_closed(&mut third, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// Sends `request` raw and returns the whole answer (the server closes).
async fn raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(request).await.unwrap();
    let (answer, closed) = read_until_closed(&mut socket, Duration::from_secs(5)).await;
    assert!(closed, "{answer}");
    answer
}

fn problem_of(answer: &str) -> serde_json::Value {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{head}"
    );
    serde_json::from_str(body).unwrap()
}

#[tokio::test]
async fn hypers_own_refusals_carry_problem_bodies() {
    let (addr, _db, _stop) = serve(quick()).await;
    let bad = raw(addr, b"THIS IS NOT HTTP\r\n\r\n").await;
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    let problem = problem_of(&bad);
    assert_eq!(problem["status"], 400);
    assert_eq!(problem["code"], "VALIDATION_ERROR");

    let long = format!("GET /{} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(70_000));
    let long = raw(addr, long.as_bytes()).await;
    assert!(
        long.starts_with("HTTP/1.1 414"),
        "{}",
        &long[..long.len().min(200)]
    );
    assert_eq!(problem_of(&long)["code"], "URI_TOO_LONG");

    let mut many = String::from("GET /healthz HTTP/1.1\r\nhost: x\r\n");
    for i in 0..120 {
        many.push_str(&format!("x-h{i}: v\r\n"));
    }
    many.push_str("\r\n");
    let many = raw(addr, many.as_bytes()).await;
    assert!(many.starts_with("HTTP/1.1 431"), "{many}");
    assert_eq!(problem_of(&many)["code"], "HEADERS_TOO_LARGE");
}

/// A socket that connects and never sends a byte is closed at the header
/// read timeout counted from accept, and so is one that stops inside the
/// HTTP/2 preface (the HTTP version sniffing reads it before any header
/// timer of hyper's starts). Before: both stayed open for as long as the
/// client liked.
#[tokio::test]
async fn a_socket_that_never_speaks_is_closed_at_the_header_timeout() {
    let (addr, _db, _stop) = serve(quick()).await;
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut half_preface = TcpStream::connect(addr).await.unwrap();
    half_preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    let (answer, closed) = read_until_closed(&mut silent, Duration::from_secs(5)).await;
    assert!(
        closed,
        "the silent socket is still open after 5 s: {answer}"
    );
    let (answer, closed) = read_until_closed(&mut half_preface, Duration::from_secs(5)).await;
    assert!(
        closed,
        "the half-preface socket is still open after 5 s: {answer}"
    );
}

/// With the connection cap full of sockets that never speak, `/healthz`
/// is still answered once their header timeout has closed them. Before:
/// it waited in the backlog for ever.
#[tokio::test]
async fn healthz_answers_with_the_cap_full_of_silent_sockets() {
    let limits = ConnectionLimits {
        max_connections: 3,
        ..quick()
    };
    let (addr, _db, _stop) = serve(limits).await;
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut probe = TcpStream::connect(addr).await.unwrap();
    probe
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = read_until_closed(&mut probe, Duration::from_secs(6)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    drop(silent);
}
