//! The HTTP server loop: hyper under our own accept loop, so that a
//! connection cannot be held open by sending nothing (docs/game-modes.md#thin-pools-smaller-matches-and-bots: one client
//! never stalls the instance).
//!
//! - **Header read timeout** ([`ConnectionLimits::header_read_timeout`]): a
//!   connection's first request head must arrive whole within it of the
//!   accept (a socket that never sends a byte is closed then), each later
//!   head within it of when the connection went idle, or the connection is
//!   closed. This is also the idle keep-alive bound.
//! - **Body read timeout** ([`ConnectionLimits::body_read_timeout`]): a
//!   request body that sends nothing for that long fails (the request is
//!   answered `408`); the whole request, body included, is bounded by the
//!   request deadline ([`crate::deadline`]), which answers a body still
//!   awaited then `408` too.
//! - **Head size**: hyper reads at most [`MAX_HEAD_BYTES`] of a request's
//!   head (`431` beyond), room for the longest URI (`414` beyond 64 KiB)
//!   and [`MAX_HEADER_BYTES`] of headers, which the edge enforces
//!   ([`crate::edge`]); over HTTP/2, the same bound on the header list.
//! - **A length given two ways** (`Content-Length` and
//!   `Transfer-Encoding`): hyper reads the body by its `Transfer-Encoding`
//!   alone and closes the connection after the answer (RFC 9112, section
//!   6.3), so nothing sent after that body on the connection is read as a
//!   request.
//! - **Connection cap** ([`ConnectionLimits::max_connections`]): beyond it
//!   no connection is accepted; new ones wait in the listen backlog until
//!   one closes (WebSocket searches count for as long as they are open:
//!   the slot is held by the socket's wrapper, [`super::hyper_errors`], so it
//!   follows the socket into the upgrade).
//! - hyper's own refusals of a request it cannot parse (`400` for a bad
//!   request line, `414`, `431`) get a problem body ([`super::hyper_errors`]).

use super::hyper_errors::ProblemIo;
use crate::edge::MAX_HEADER_BYTES;
use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;

/// The most of a request's head (request line and headers) hyper reads:
/// a 64 KiB URI, [`MAX_HEADER_BYTES`] of headers and their line ends.
pub const MAX_HEAD_BYTES: usize = 64 * 1024 + MAX_HEADER_BYTES + 4 * 1024;

/// Bounds on what one connection may hold (`matchplane api` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time to receive a request's whole head, and the most a kept-alive
    /// connection may sit idle before its next request
    /// (`MATCHPLANE_HEADER_READ_TIMEOUT_SECONDS`, 10 s).
    pub header_read_timeout: Duration,
    /// The most a request body may pause between two reads
    /// (`MATCHPLANE_BODY_READ_TIMEOUT_SECONDS`, 10 s).
    pub body_read_timeout: Duration,
    /// Connections open at once, WebSockets included
    /// (`MATCHPLANE_MAX_CONNECTIONS`, 10 000).
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            max_connections: 10_000,
        }
    }
}

/// Serves `app` on `listener` within `limits` until `shutdown` completes,
/// then waits for the open requests to finish.
///
/// # Errors
/// Never in practice: a failed accept (e.g. out of file descriptors) is
/// logged and retried after a short pause.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(MAX_HEAD_BYTES);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(MAX_HEAD_BYTES).unwrap_or(u32::MAX))
        .keep_alive_interval(Some(limits.header_read_timeout))
        .keep_alive_timeout(limits.header_read_timeout);
    let body_timeout = limits.body_read_timeout;
    let header_timeout = limits.header_read_timeout;
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(err) => {
                    tracing::warn!(error = %err, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // No Nagle delay: a WebSocket Ping frame right after a status frame
        // must leave at once, or `pingMs` measures a delayed ACK (~40 ms).
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!(error = %err, "TCP_NODELAY not set");
        }
        // Told when the first request head has been read: until then the
        // connection is bounded from accept (below), after it by hyper's
        // own header timer, which starts only once a byte has been sniffed.
        let first_head = Arc::new(Notify::new());
        let told = Arc::clone(&first_head);
        let service = app
            .clone()
            .map_request(move |request: hyper::Request<Incoming>| {
                told.notify_one();
                request.map(|body| Body::new(TimeoutBody::new(body_timeout, body)))
            });
        let connection = builder
            .serve_connection_with_upgrades(
                // The slot travels with the socket, into an upgrade too
                // (a WebSocket search), and is freed when it closes.
                TokioIo::new(ProblemIo::new(tcp, slot)),
                TowerToHyperService::new(service),
            )
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::pin!(connection);
            // hyper-util's HTTP version sniffing waits for bytes with no
            // timer, and hyper's header timer starts after it: without this
            // bound a socket that never speaks holds its slot for ever.
            let ended = tokio::select! {
                biased;
                ended = &mut connection => Some(ended),
                () = first_head.notified() => Some(connection.await),
                () = tokio::time::sleep(header_timeout) => None,
            };
            match ended {
                Some(Err(err)) => tracing::debug!(error = %err, "connection ended with an error"),
                Some(Ok(())) => {}
                None => tracing::debug!("no request head within the header read timeout; closed"),
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
