//! The connection to one Redis node, replaced when it stops answering
//! (docs/operations.md, "What losing a dependency costs").
//!
//! The connection manager reconnects when it learns that its connection
//! was closed. A peer that vanished without closing it (a host failed
//! over or cut off the network: no reset ever comes) leaves the connection
//! open and silent, and every command on it timed out until the kernel gave
//! up on it, many minutes later. So a command that times out, and a
//! `PING` of the health check that goes unanswered, start a new connection
//! in the background; the commands after it take the new one as soon as
//! it is made, and those still waiting on the old one fail at once. A
//! Redis that is only slow (a long script) costs a new connection and, at
//! worst, the commands in flight.
//!
//! Every connection of the stores to Redis (here, the cluster client's and
//! the status subscription's) also sets TCP keepalive and
//! `TCP_USER_TIMEOUT` ([`tcp_settings`]): an idle connection whose peer
//! vanished is found within about half a minute, and so is one whose
//! sent data is never acknowledged.

use arc_swap::ArcSwap;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::io::tcp::{socket2::TcpKeepalive, TcpSettings};
use redis::{Cmd, IntoConnectionInfo, Pipeline, RedisResult, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::watch;

/// Idle time before the first keepalive probe, the time between probes,
/// and how many unanswered probes close the connection.
const KEEPALIVE: (Duration, Duration, u32) = (Duration::from_secs(15), Duration::from_secs(5), 3);

/// How long sent data may stay unacknowledged before the kernel closes the
/// connection (`TCP_USER_TIMEOUT`). Redis acknowledges data it has not
/// yet answered, so a slow command never reaches this.
const USER_TIMEOUT: Duration = Duration::from_secs(20);

/// The TCP options of every connection to Redis: keepalive probes, and a
/// bound on unacknowledged data (see the module's comment). Nagle's
/// algorithm stays on: `scripts/ticket-bench` measured no gain without it
/// (many requests share a connection, and it coalesces their writes).
pub(crate) fn tcp_settings() -> TcpSettings {
    TcpSettings::default()
        .set_keepalive(
            TcpKeepalive::new()
                .with_time(KEEPALIVE.0)
                .with_interval(KEEPALIVE.1)
                .with_retries(KEEPALIVE.2),
        )
        .set_user_timeout(USER_TIMEOUT)
}

/// A client for the node at `url` whose connections use [`tcp_settings`].
///
/// # Errors
/// The URL is not a Redis URL.
pub(crate) fn client(url: &str) -> RedisResult<redis::Client> {
    let info = url.into_connection_info()?.set_tcp_settings(tcp_settings());
    redis::Client::open(info)
}

/// A shared, reconnecting, multiplexed connection to one node. Cheap to
/// clone: clones share the connection and its replacement.
#[derive(Clone)]
pub struct NodeConn {
    shared: Arc<Shared>,
}

struct Shared {
    client: redis::Client,
    config: ConnectionManagerConfig,
    current: ArcSwap<Current>,
    /// The generation in use: commands in flight on a replaced
    /// connection are failed at once rather than waiting out their
    /// timeout on it.
    generation: watch::Sender<u64>,
    /// A replacement is being made.
    replacing: AtomicBool,
    db: i64,
}

/// The connection in use and how many replaced it.
struct Current {
    generation: u64,
    manager: ConnectionManager,
}

/// How often the connection in use is asked a `PING`: one that does not
/// answer within the command timeout (at most [`HEALTH_WAIT`]) is
/// replaced, also while no command is sent (a worker's command timeout is
/// long, for its snapshots).
const HEALTH_EVERY: Duration = Duration::from_secs(5);
const HEALTH_WAIT: Duration = Duration::from_secs(5);

impl NodeConn {
    /// Connects with `config`, and starts the connection's health check
    /// (it stops when the last clone is dropped).
    pub(crate) async fn connect(
        client: redis::Client,
        config: ConnectionManagerConfig,
    ) -> RedisResult<Self> {
        let db = client.get_connection_info().redis_settings().db();
        let manager = ConnectionManager::new_with_config(client.clone(), config.clone()).await?;
        let shared = Arc::new(Shared {
            client,
            config,
            current: ArcSwap::from_pointee(Current {
                generation: 0,
                manager,
            }),
            generation: watch::Sender::new(0),
            replacing: AtomicBool::new(false),
            db,
        });
        tokio::spawn(health(Arc::downgrade(&shared)));
        Ok(Self { shared })
    }

    /// The connection in use, and its generation.
    fn current(&self) -> (u64, ConnectionManager) {
        let current = self.shared.current.load();
        (current.generation, current.manager.clone())
    }

    /// Runs `command` on the connection in use; a timeout starts its
    /// replacement, and a replacement fails it at once (as timed out).
    async fn run<T, F>(&self, command: impl FnOnce(ConnectionManager) -> F) -> RedisResult<T>
    where
        F: std::future::Future<Output = RedisResult<T>>,
    {
        let (generation, c) = self.current();
        let mut replaced = self.shared.generation.subscribe();
        let got = tokio::select! {
            got = command(c) => got,
            _ = replaced.wait_for(|g| *g != generation) => Err(timed_out()),
        };
        if got.as_ref().is_err_and(redis::RedisError::is_timeout) {
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

    /// The node's database index.
    pub(crate) fn get_db(&self) -> i64 {
        self.shared.db
    }
}

/// A command's timeout, as the connection manager reports its own.
fn timed_out() -> redis::RedisError {
    std::io::Error::from(std::io::ErrorKind::TimedOut).into()
}

/// Starts a replacement of connection `generation` in the background,
/// unless one is under way or it was replaced already; once made, the new
/// connection takes the commands, and those still on the old one fail.
fn replace(shared: &Arc<Shared>, generation: u64) {
    if shared.current.load().generation != generation
        || shared.replacing.swap(true, Ordering::AcqRel)
    {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        let made =
            ConnectionManager::new_with_config(shared.client.clone(), shared.config.clone()).await;
        match made {
            Ok(manager) => {
                tracing::warn!("a Redis connection timed out: it is replaced by a new one");
                shared.current.store(Arc::new(Current {
                    generation: generation + 1,
                    manager,
                }));
                shared.generation.send_replace(generation + 1);
            }
            // Redis is unreachable: the next timeout tries again.
            Err(e) => tracing::warn!(error = %e, "a new Redis connection failed"),
        }
        shared.replacing.store(false, Ordering::Release);
    });
}

/// Asks the connection in use a `PING` every [`HEALTH_EVERY`], replacing
/// it when the answer does not come in time.
async fn health(shared: Weak<Shared>) {
    let mut every = tokio::time::interval(HEALTH_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let (generation, mut manager) = {
            let current = shared.current.load();
            (current.generation, current.manager.clone())
        };
        let wait = shared
            .config
            .response_timeout()
            .map_or(HEALTH_WAIT, |t| t.min(HEALTH_WAIT));
        let ping = redis::cmd("PING");
        let silent = match tokio::time::timeout(wait, manager.send_packed_command(&ping)).await {
            Err(_) => true,
            Ok(answer) => answer.is_err_and(|e| e.is_timeout()),
        };
        if silent {
            replace(&shared, generation);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timer the kernel runs on the TCP connection from local port
    /// `local` to port `remote` (`/proc/net/tcp`'s `tr` column: 2 is
    /// keepalive), if it is found.
    fn timer_of(local: u16, remote: u16) -> Option<u8> {
        let port = |addr: &str| {
            addr.rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok())
        };
        ["/proc/net/tcp", "/proc/net/tcp6"]
            .into_iter()
            .filter_map(|table| std::fs::read_to_string(table).ok())
            .flat_map(|text| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>())
            .find_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                (port(f.get(1)?) == Some(local) && port(f.get(2)?) == Some(remote))
                    .then(|| f.get(5)?.split(':').next()?.parse().ok())
                    .flatten()
            })
    }

    /// A node connection probes its idle peer: the kernel runs a
    /// keepalive timer on it (before, none: a peer that vanished was found
    /// only once TCP gave up on data sent to it).
    #[tokio::test]
    async fn a_node_connection_runs_keepalive_probes() {
        let url = crate::test_support::redis_url();
        let client = client(&url).unwrap();
        let remote = client.get_connection_info().addr().to_string();
        let remote: u16 = remote.rsplit(':').next().unwrap().parse().unwrap();
        let conn = NodeConn::connect(client, ConnectionManagerConfig::new())
            .await
            .unwrap();
        // The connection's own address, as Redis sees it.
        let info = conn
            .req_packed_command(redis::cmd("CLIENT").arg("INFO"))
            .await
            .unwrap();
        let info: String = redis::from_redis_value(info).unwrap();
        let addr = info
            .split_whitespace()
            .find_map(|f| f.strip_prefix("addr="))
            .unwrap();
        let local: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
        assert_eq!(
            timer_of(local, remote),
            Some(2),
            "the connection {addr} runs no keepalive timer"
        );
    }
}
