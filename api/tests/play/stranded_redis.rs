//! A Redis connection whose peer vanished without closing it (a host
//! failed over or cut off: no reset ever comes) is replaced once a command
//! on it times out (docs/operations.md, "What losing a dependency
//! costs"). Before, every later command waited on the silent connection
//! and was refused `503` until the kernel gave up on it, many minutes
//! later, although a new connection would have reached Redis at once.

use crate::fault_proxy::FaultProxy;
use crate::harness::solo;
use crate::outages::{app_within, database, redis_through_proxy, send, studio, Got};
use axum::http::{Method, StatusCode};
use axum::Router;
use matchplane_store::test_support::TestDatabase;
use std::time::{Duration, Instant};

/// An app whose Redis is reached through a proxy the test strands, with a
/// studio's project, key and `duel` mode; Redis commands wait 1 s for their
/// answer (the app's setting). Its keys are deleted when dropped.
struct Stranding {
    proxy: FaultProxy,
    app: Router,
    project: String,
    tickets: String,
    key: String,
    prefix: String,
    _database: TestDatabase,
}

impl Stranding {
    async fn new() -> Self {
        let (proxy, via) = redis_through_proxy().await;
        let prefix = format!("mpt_{}", ulid::Ulid::new());
        let (db_url, database) = database(None).await;
        let app = app_within(&db_url, &via, &prefix, Duration::from_secs(10)).await;
        let (project, key) = studio(&app).await;
        Self {
            proxy,
            app,
            tickets: format!("/v1/projects/{project}/tickets"),
            project,
            key,
            prefix,
            _database: database,
        }
    }

    /// Creates a ticket for `player`.
    async fn ticket(&self, player: &str) -> Got {
        let body = Some(solo("duel", player));
        send(
            &self.app,
            Method::POST,
            &self.tickets,
            Some(&self.key),
            body,
        )
        .await
    }

    /// Serves the app on a free port; its address.
    async fn serve(&self) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = self.app.clone();
        tokio::spawn(async move { axum::serve(listener, served).await });
        addr
    }

    /// Creates a ticket for `player`, trying again until it is made (at
    /// most 8 s); its token.
    async fn token_of(&self, player: &str) -> String {
        let started = Instant::now();
        loop {
            let made = self.ticket(player).await;
            if made.status == StatusCode::CREATED {
                return made.body["token"].as_str().unwrap().to_owned();
            }
            assert!(
                started.elapsed() < Duration::from_secs(8),
                "no ticket: {}",
                made.body
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// A WebSocket search with `token` on the app at `addr`, once it says
/// `searching` (at most 5 s).
async fn search(
    addr: std::net::SocketAddr,
    token: String,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    use futures::StreamExt;
    let url = format!("ws://{addr}/v1/search?ticket={token}");
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), socket.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(first.to_string().contains("searching"), "{first}");
    socket
}

impl Drop for Stranding {
    fn drop(&mut self) {
        let _ = matchplane_store::pool::redis::delete_prefix_blocking(
            &crate::harness::redis_url(),
            &self.prefix,
        );
    }
}

/// A ticket whose writes Redis ran but whose answer was lost (`503`) is
/// deleted again once Redis answers: it stops counting among the project's
/// pending tickets, toward `maxPendingTickets` (before, it counted until
/// its TTL ran out, ten minutes here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_whose_answer_was_lost_stops_counting_as_pending() {
    let t = Stranding::new().await;
    let made = t.ticket("a").await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let kept = made.body["ticketId"].as_str().unwrap().to_owned();

    // The next generation reaches Redis; its answer does not come back.
    t.proxy.mute();
    let lost = t.ticket("b").await;
    assert_eq!(
        lost.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        lost.body
    );

    let client = redis::Client::open(crate::harness::redis_url()).unwrap();
    let mut redis = client.get_multiplexed_async_connection().await.unwrap();
    let pending_key = format!("{}:{{{}}}:pending", t.prefix, t.project);
    let records = format!("{}:ticket:{}:*", t.prefix, t.project);
    let started = Instant::now();
    loop {
        let pending: Vec<String> = redis::cmd("ZRANGE")
            .arg(&pending_key)
            .arg(0)
            .arg(-1)
            .query_async(&mut redis)
            .await
            .unwrap();
        let stored: Vec<String> = redis::cmd("KEYS")
            .arg(&records)
            .query_async(&mut redis)
            .await
            .unwrap();
        if pending == [kept.clone()] && stored.len() == 1 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the lost ticket is still kept: pending {pending:?}, records {stored:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The player's retry makes a ticket of its own.
    let retried = t.ticket("b").await;
    assert_eq!(retried.status, StatusCode::CREATED, "{}", retried.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_redis_connection_is_replaced_after_a_timeout() {
    let t = Stranding::new().await;
    let made = t.ticket("a").await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);

    // The connection in use goes silent for good; new ones reach Redis.
    t.proxy.strand();
    let cut = t.ticket("b").await;
    assert_eq!(cut.status, StatusCode::SERVICE_UNAVAILABLE, "{}", cut.body);

    let stranded = Instant::now();
    let mut answers = Vec::new();
    loop {
        let got = t.ticket(&format!("p{}", answers.len())).await;
        answers.push(got.status);
        if got.status == StatusCode::CREATED {
            break;
        }
        assert!(
            stranded.elapsed() < Duration::from_secs(8),
            "still refused 8 s after the first timeout: {answers:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The status subscription's connection is replaced as well: after a
/// strand, a WebSocket search starts again within seconds (before, every
/// start waited on the silent subscription and was cut at the request
/// deadline, `503`, until the API restarted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_starts_recover_after_a_strand() {
    let t = Stranding::new().await;
    let addr = t.serve().await;
    // The subscription's connection exists before the strand.
    let _a = search(addr, t.token_of("a").await).await;

    t.proxy.strand();
    let token = t.token_of("b").await;
    let stranded = Instant::now();
    let _b = search(addr, token).await;
    assert!(
        stranded.elapsed() < Duration::from_secs(9),
        "the start took {:?}",
        stranded.elapsed()
    );
}

/// A silent connection is found without a request waiting on it: the
/// connection's health check replaces it, so the first request after a
/// quiet strand is answered (before, it waited out its command timeout and
/// was refused `503`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_redis_connection_is_replaced_while_no_request_waits() {
    let t = Stranding::new().await;
    let made = t.ticket("a").await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    t.proxy.strand();
    // A check every 5 s, answered within the command timeout (1 s here).
    tokio::time::sleep(Duration::from_millis(7500)).await;
    let after = t.ticket("b").await;
    assert_eq!(after.status, StatusCode::CREATED, "{}", after.body);
}

/// `/readyz` says ready only once the status subscription's connection
/// answers: then a WebSocket search starts at once. Before, the instance
/// was ready as soon as its command connection was replaced, while a
/// search's start still waited on the silent subscription (its command
/// timeout, 1 s here, then a new connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_waits_for_the_status_subscription() {
    let t = Stranding::new().await;
    let addr = t.serve().await;
    // The subscription's connection exists (and was just checked).
    let _a = search(addr, t.token_of("a").await).await;

    t.proxy.strand();
    // A request times out on the silent command connection, which is
    // replaced at once; the subscription's next own check is 5 s away.
    let cut = t.ticket("b").await;
    assert_eq!(cut.status, StatusCode::SERVICE_UNAVAILABLE, "{}", cut.body);
    let stranded = Instant::now();
    let mut answers = Vec::new();
    loop {
        let ready = send(&t.app, Method::GET, "/readyz", None, None).await;
        answers.push(ready.status);
        if ready.status == StatusCode::OK {
            break;
        }
        assert!(
            stranded.elapsed() < Duration::from_secs(8),
            "not ready 8 s after the strand: {answers:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let token = t.token_of("c").await;
    let ready = Instant::now();
    let _c = search(addr, token).await;
    assert!(
        ready.elapsed() < Duration::from_millis(700),
        "ready, yet the search took {:?} to start (readiness answers {answers:?})",
        ready.elapsed()
    );
}
