//! A TCP proxy a test can break: it relays to an upstream (PostgreSQL,
//! Redis) until told to **stall** (bytes in either direction are held, new
//! connections accepted and never answered: a black-holed network, which
//! **resume** ends: the held bytes go on, as a network's retransmissions
//! would once it is back) or to **drop** (every connection closed and the
//! port no longer listening: a stopped server).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

const RELAY: u8 = 0;
const STALL: u8 = 1;

pub struct FaultProxy {
    pub port: u16,
    mode: Arc<AtomicU8>,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    acceptor: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` (`host:port`) on 127.0.0.1, port 0.
    pub async fn start(upstream: &str) -> Self {
        Self::start_on(upstream, 0).await
    }

    /// Starts a proxy to `upstream` on 127.0.0.1:`port` (0: any): a proxy
    /// dropped with [`FaultProxy::drop_all`] comes back on its old port.
    pub async fn start_on(upstream: &str, port: u16) -> Self {
        let upstream = upstream.to_owned();
        // A proxy dropped a moment ago may still hold its port while its
        // aborted acceptor task winds down: retry for up to 5 s.
        let mut tries = 0;
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => break listener,
                Err(err) if err.kind() == std::io::ErrorKind::AddrInUse && tries < 100 => {
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                Err(err) => panic!("fault proxy on 127.0.0.1:{port}: {err}"),
            }
        };
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(RELAY));
        let tasks: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let (m, t) = (mode.clone(), tasks.clone());
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                // A connection accepted while stalled is relayed only once
                // the stall ends (its client may have given up by then).
                let (m, t2, upstream) = (m.clone(), t.clone(), upstream.clone());
                let relay = tokio::spawn(async move {
                    while m.load(Ordering::SeqCst) == STALL {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    let mut tasks = t2.lock().unwrap();
                    tasks.push(tokio::spawn(pump(cr, sw, m.clone())));
                    tasks.push(tokio::spawn(pump(sr, cw, m.clone())));
                });
                t.lock().unwrap().push(relay);
            }
        });
        Self {
            port,
            mode,
            tasks,
            acceptor,
        }
    }

    /// Holds every byte from now on, and answers no new connection.
    pub fn stall(&self) {
        self.mode.store(STALL, Ordering::SeqCst);
    }

    /// Ends a [`FaultProxy::stall`]: the held bytes and connections go on.
    #[allow(dead_code)] // not every test binary that includes this file resumes
    pub fn resume(&self) {
        self.mode.store(RELAY, Ordering::SeqCst);
    }

    /// Closes every connection and stops listening.
    pub fn drop_all(&self) {
        self.acceptor.abort();
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.drop_all();
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mode: Arc<AtomicU8>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while mode.load(Ordering::SeqCst) == STALL {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
