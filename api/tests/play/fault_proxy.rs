//! A TCP proxy a test can break: it relays to an upstream (PostgreSQL,
//! Redis) until told to **stall** (bytes in either direction are held, new
//! connections accepted and never answered: a black-holed network, which
//! **resume** ends: the held bytes go on, as a network's retransmissions
//! would once it is back), to **strand** the connections it has (their
//! bytes held for good, new connections relayed: a database that failed
//! over to another host, its old connections' peer gone without a word)
//! or to **drop** (every connection closed and the port no longer
//! listening: a stopped server). It can also **mute** the connections it
//! has: their requests still reach the server, whose answers are lost (a
//! network cut just after the request went out).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
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
    /// Connections numbered below this are stranded.
    stranded: Arc<AtomicU64>,
    /// Connections numbered below this are muted.
    muted: Arc<AtomicU64>,
    /// How many connections were accepted.
    accepted: Arc<AtomicU64>,
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
        let stranded = Arc::new(AtomicU64::new(0));
        let muted = Arc::new(AtomicU64::new(0));
        let accepted = Arc::new(AtomicU64::new(0));
        let (m, t, s, a, u) = (
            mode.clone(),
            tasks.clone(),
            stranded.clone(),
            accepted.clone(),
            muted.clone(),
        );
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                // A connection accepted while stalled is relayed only once
                // the stall ends (its client may have given up by then).
                let (m, t2, upstream) = (m.clone(), t.clone(), upstream.clone());
                let held = Held {
                    stranded: s.clone(),
                    muted: u.clone(),
                    number: a.fetch_add(1, Ordering::SeqCst),
                };
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
                    let client = pump(cr, sw, m.clone(), held.clone(), Side::Client);
                    tasks.push(tokio::spawn(client));
                    tasks.push(tokio::spawn(pump(sr, cw, m.clone(), held, Side::Server)));
                });
                t.lock().unwrap().push(relay);
            }
        });
        Self {
            port,
            mode,
            stranded,
            muted,
            accepted,
            tasks,
            acceptor,
        }
    }

    /// Strands the connections made so far: each is closed towards the
    /// server and left open and silent towards its client, for good; new
    /// connections are relayed.
    #[allow(dead_code)] // not every test binary that includes this file strands
    pub fn strand(&self) {
        self.stranded
            .store(self.accepted.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// Mutes the connections made so far: what their clients send still
    /// reaches the server, whose answers are dropped; new connections are
    /// relayed.
    #[allow(dead_code)] // not every test binary that includes this file mutes
    pub fn mute(&self) {
        self.muted
            .store(self.accepted.load(Ordering::SeqCst), Ordering::SeqCst);
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

/// A relayed connection's number, and below which number connections are
/// stranded.
#[derive(Clone)]
struct Held {
    stranded: Arc<AtomicU64>,
    muted: Arc<AtomicU64>,
    number: u64,
}

impl Held {
    fn is_muted(&self) -> bool {
        self.number < self.muted.load(Ordering::SeqCst)
    }

    fn is_stranded(&self) -> bool {
        self.number < self.stranded.load(Ordering::SeqCst)
    }

    /// Resolves once the connection is stranded.
    async fn stranded(&self) {
        while !self.is_stranded() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Which side a pump reads from.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Client,
    Server,
}

/// Relays `from` to `to` until either closes; once the connection is
/// stranded, closes the server's side and keeps the client's open and
/// silent for good.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mode: Arc<AtomicU8>,
    held: Held,
    side: Side,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                // The server closing its side once the other pump closed
                // it (stranded) must not close the client's.
                Ok(0) | Err(_) if held.is_stranded() => break,
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            () = held.stranded() => break,
        };
        while mode.load(Ordering::SeqCst) == STALL && !held.is_stranded() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if held.is_stranded() {
            break;
        }
        if side == Side::Server && held.is_muted() {
            continue;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
    // Stranded: the server's half goes, the client's stays.
    match side {
        Side::Client => {
            drop(to);
            let _client = from;
            std::future::pending::<()>().await;
        }
        Side::Server => {
            drop(from);
            let _client = to;
            std::future::pending::<()>().await;
        }
    }
}
