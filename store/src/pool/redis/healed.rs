//! A Redis connection replaced when it stops answering (docs/operations.md,
//! "What losing a dependency costs"), for one node and for a cluster alike.
//!
//! A peer that vanished without closing the connection (a host failed
//! over or cut off the network: no reset ever comes) leaves it open and
//! silent; a cluster client can also wedge on its own, its slot map's
//! refresh never ending after a master that stalled comes back, every
//! command waiting unsent behind it until the process restarts. So a
//! health check asks the connection in use a `PING` every
//! [`HEALTH_EVERY`], and a connection that does not answer is replaced in
//! the background: the commands after it take the new one as soon as it is
//! made, and those still waiting on the old one fail at once. What counts
//! as not answering is the [`Dial`]'s: for one node a command's timeout
//! too; for a cluster only `PING`s unanswered [`Dial::SILENT_PINGS`] times
//! in a row (one master stalled times out the commands of its slots, while
//! the connection serves the others).

use arc_swap::ArcSwap;
use redis::aio::ConnectionLike;
use redis::{Cmd, Pipeline, RedisResult, Value};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::watch;

/// How often the connection in use is asked a `PING`, and the longest it
/// may take to answer (less when the commands' own timeout is shorter).
const HEALTH_EVERY: Duration = Duration::from_secs(5);
const HEALTH_WAIT: Duration = Duration::from_secs(5);

/// How a connection is made, and when it counts as silent.
pub trait Dial: Send + Sync + 'static {
    /// The connection: a cheap, shareable handle.
    type Conn: ConnectionLike + Clone + Send + Sync + 'static;

    /// `PING`s unanswered in a row that replace the connection.
    const SILENT_PINGS: u32;

    /// Whether a command's timeout replaces the connection too.
    const TIMEOUT_REPLACES: bool;

    /// Makes a new connection.
    fn dial(&self) -> impl Future<Output = RedisResult<Self::Conn>> + Send;

    /// The commands' timeout, if any.
    fn response_timeout(&self) -> Option<Duration>;
}

/// A shared connection replaced when silent (see the module's comment).
/// Cheap to clone: clones share the connection and its replacement.
pub struct Healed<D: Dial> {
    shared: Arc<Shared<D>>,
}

impl<D: Dial> Clone for Healed<D> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

struct Shared<D: Dial> {
    dial: D,
    current: ArcSwap<Current<D::Conn>>,
    /// The generation in use: commands in flight on a replaced connection
    /// are failed at once rather than waiting out their timeout on it.
    generation: watch::Sender<u64>,
    /// A replacement is being made.
    replacing: AtomicBool,
    db: i64,
}

/// The connection in use and how many replaced it.
struct Current<C> {
    generation: u64,
    conn: C,
}

impl<D: Dial> Healed<D> {
    /// Connects with `dial`, and starts the connection's health check (it
    /// stops when the last clone is dropped).
    pub(crate) async fn connect(dial: D, db: i64) -> RedisResult<Self> {
        let conn = dial.dial().await?;
        let shared = Arc::new(Shared {
            dial,
            current: ArcSwap::from_pointee(Current {
                generation: 0,
                conn,
            }),
            generation: watch::Sender::new(0),
            replacing: AtomicBool::new(false),
            db,
        });
        tokio::spawn(health(Arc::downgrade(&shared)));
        Ok(Self { shared })
    }

    /// The connection in use, and its generation.
    fn current(&self) -> (u64, D::Conn) {
        let current = self.shared.current.load();
        (current.generation, current.conn.clone())
    }

    /// Runs `command` on the connection in use; a replacement fails it at
    /// once (as timed out), and with [`Dial::TIMEOUT_REPLACES`] its
    /// timeout starts one.
    async fn run<T, F>(&self, command: impl FnOnce(D::Conn) -> F) -> RedisResult<T>
    where
        F: Future<Output = RedisResult<T>>,
    {
        let (generation, c) = self.current();
        let mut replaced = self.shared.generation.subscribe();
        let got = tokio::select! {
            got = command(c) => got,
            _ = replaced.wait_for(|g| *g != generation) => Err(timed_out()),
        };
        if D::TIMEOUT_REPLACES && got.as_ref().is_err_and(redis::RedisError::is_timeout) {
            replace(&self.shared, generation);
        }
        got
    }

    /// Sends `cmd`; see [`super::conn`] for the one resend.
    pub(crate) async fn req_packed_command(&self, cmd: &Cmd) -> RedisResult<Value> {
        self.run(|mut c| async move {
            match c.req_packed_command(cmd).await {
                Err(e) if super::conn::is_broken(&e) => c.req_packed_command(cmd).await,
                other => other,
            }
        })
        .await
    }

    /// Sends `pipeline`; see [`super::conn`] for the one resend.
    pub(crate) async fn req_packed_commands(
        &self,
        pipeline: &Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.run(|mut c| async move {
            match c.req_packed_commands(pipeline, offset, count).await {
                Err(e) if super::conn::is_broken(&e) => {
                    c.req_packed_commands(pipeline, offset, count).await
                }
                other => other,
            }
        })
        .await
    }

    /// The database index (0 on a cluster).
    pub(crate) fn get_db(&self) -> i64 {
        self.shared.db
    }
}

/// A command's timeout, as the connection reports its own.
fn timed_out() -> redis::RedisError {
    std::io::Error::from(std::io::ErrorKind::TimedOut).into()
}

/// Starts a replacement of connection `generation` in the background,
/// unless one is under way or it was replaced already; once made, the new
/// connection takes the commands, and those still on the old one fail.
fn replace<D: Dial>(shared: &Arc<Shared<D>>, generation: u64) {
    if shared.current.load().generation != generation
        || shared.replacing.swap(true, Ordering::AcqRel)
    {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        match shared.dial.dial().await {
            Ok(conn) => {
                tracing::warn!("a Redis connection stopped answering: it is replaced by a new one");
                shared.current.store(Arc::new(Current {
                    generation: generation + 1,
                    conn,
                }));
                shared.generation.send_replace(generation + 1);
            }
            // Redis is unreachable: the next silence tries again.
            Err(e) => tracing::warn!(error = %e, "a new Redis connection failed"),
        }
        shared.replacing.store(false, Ordering::Release);
    });
}

/// Asks the connection in use a `PING` every [`HEALTH_EVERY`], replacing
/// it when [`Dial::SILENT_PINGS`] in a row go unanswered in time.
async fn health<D: Dial>(shared: Weak<Shared<D>>) {
    let mut every = tokio::time::interval(HEALTH_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut silent_pings = 0;
    loop {
        every.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let (generation, mut conn) = {
            let current = shared.current.load();
            (current.generation, current.conn.clone())
        };
        let wait = shared
            .dial
            .response_timeout()
            .map_or(HEALTH_WAIT, |t| t.min(HEALTH_WAIT));
        let ping = redis::cmd("PING");
        let silent = match tokio::time::timeout(wait, conn.req_packed_command(&ping)).await {
            Err(_) => true,
            Ok(answer) => answer.is_err_and(|e| e.is_timeout()),
        };
        silent_pings = if silent { silent_pings + 1 } else { 0 };
        if silent_pings >= D::SILENT_PINGS {
            silent_pings = 0;
            replace(&shared, generation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::aio::{ConnectionManager, ConnectionManagerConfig};
    use std::sync::atomic::AtomicBool;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// A relay to the test Redis whose connections made so far go silent,
    /// left open, once `strand` is set; connections made after it relay.
    async fn relay(strand: Arc<AtomicBool>) -> u16 {
        let target = crate::test_support::host_port(&crate::test_support::redis_url());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = TcpStream::connect(&target).await.unwrap();
                // Set when this connection is stranded: later ones relay.
                let stranded = Arc::new(AtomicBool::new(false));
                let watch = (strand.clone(), stranded.clone());
                tokio::spawn(async move {
                    while !watch.0.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    watch.1.store(true, Ordering::SeqCst);
                    watch.0.store(false, Ordering::SeqCst);
                });
                let (cr, cw) = client.into_split();
                let (ur, uw) = upstream.into_split();
                for (mut from, mut to) in [(cr, uw), (ur, cw)] {
                    let stranded = stranded.clone();
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 16 * 1024];
                        while let Ok(n) = from.read(&mut buf).await {
                            if n == 0 || stranded.load(Ordering::SeqCst) {
                                break;
                            }
                            if to.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                        // Silent, never closed.
                        std::future::pending::<()>().await;
                    });
                }
            }
        });
        port
    }

    /// Connections through the relay, judged as a cluster's: only
    /// unanswered `PING`s replace them.
    struct Relayed(redis::Client);

    impl Dial for Relayed {
        type Conn = ConnectionManager;
        const SILENT_PINGS: u32 = 2;
        const TIMEOUT_REPLACES: bool = false;

        async fn dial(&self) -> RedisResult<ConnectionManager> {
            let config = ConnectionManagerConfig::new()
                .set_response_timeout(Some(Duration::from_secs(1)))
                .set_number_of_retries(0);
            ConnectionManager::new_with_config(self.0.clone(), config).await
        }

        fn response_timeout(&self) -> Option<Duration> {
            Some(Duration::from_secs(1))
        }
    }

    /// A connection that answers nothing any more (as a cluster client
    /// whose slot refresh never ended) is replaced after two unanswered
    /// `PING`s, and commands go on over the new one; a command's timeout
    /// alone replaced nothing.
    #[tokio::test]
    async fn a_silent_connection_is_replaced_after_two_silent_pings() {
        let strand = Arc::new(AtomicBool::new(false));
        let port = relay(strand.clone()).await;
        let db = crate::test_support::redis_url()
            .rsplit('/')
            .next()
            .and_then(|d| d.parse::<i64>().ok())
            .unwrap_or(0);
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/{db}")).unwrap();
        let conn = Healed::connect(Relayed(client), db).await.unwrap();
        let ping = redis::cmd("PING");
        conn.req_packed_command(&ping).await.unwrap();
        strand.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let stuck = conn.req_packed_command(&ping).await;
        assert!(stuck.is_err_and(|e| e.is_timeout()));
        let replacements = || conn.shared.current.load().generation;
        assert_eq!(replacements(), 0, "a timeout alone replaces nothing");
        let started = std::time::Instant::now();
        while replacements() == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "not replaced within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        conn.req_packed_command(&ping)
            .await
            .expect("commands go on over the new connection");
    }
}
