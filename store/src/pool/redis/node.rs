//! The connection to one Redis node, replaced when it stops answering
//! (`healed.rs`, docs/operations.md, "What losing a dependency costs").
//!
//! The connection manager reconnects when it learns that its connection
//! was closed. A peer that vanished without closing it (a host failed
//! over or cut off the network: no reset ever comes) leaves the connection
//! open and silent, and every command on it timed out until the kernel gave
//! up on it, many minutes later. So a command that times out, and a
//! `PING` of the health check that goes unanswered, start a new connection
//! in the background. A Redis that is only slow (a long script) costs a
//! new connection and, at worst, the commands in flight.
//!
//! Every connection of the stores to Redis (here, the cluster client's and
//! the status subscription's) also sets TCP keepalive and
//! `TCP_USER_TIMEOUT` ([`tcp_settings`]): an idle connection whose peer
//! vanished is found within about half a minute, and so is one whose
//! sent data is never acknowledged.

use super::healed::{Dial, Healed};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::io::tcp::{socket2::TcpKeepalive, TcpSettings};
use redis::{IntoConnectionInfo, RedisResult};
use std::time::Duration;

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

/// How a connection to one node is made: a connection manager (which
/// reconnects when it learns its connection was closed) with `config`.
pub struct NodeDial {
    client: redis::Client,
    config: ConnectionManagerConfig,
}

impl Dial for NodeDial {
    type Conn = ConnectionManager;
    /// One node: a `PING` unanswered is the connection's silence.
    const SILENT_PINGS: u32 = 1;
    /// One node answers every command: a timeout is its silence too.
    const TIMEOUT_REPLACES: bool = true;

    async fn dial(&self) -> RedisResult<ConnectionManager> {
        ConnectionManager::new_with_config(self.client.clone(), self.config.clone()).await
    }

    fn response_timeout(&self) -> Option<Duration> {
        self.config.response_timeout()
    }
}

/// A shared, reconnecting, multiplexed connection to one node, replaced
/// when it stops answering ([`super::healed`]). Cheap to clone: clones
/// share the connection and its replacement.
pub type NodeConn = Healed<NodeDial>;

/// Connects to the node of `client` with `config`.
///
/// # Errors
/// The node cannot be reached.
pub(crate) async fn connect(
    client: redis::Client,
    config: ConnectionManagerConfig,
) -> RedisResult<NodeConn> {
    let db = client.get_connection_info().redis_settings().db();
    Healed::connect(NodeDial { client, config }, db).await
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
        let conn = connect(client, ConnectionManagerConfig::new())
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
        // The kernel shows one timer a connection: while a segment waits
        // for its acknowledgement (a loaded machine) the retransmit timer
        // (1) stands in front of the keepalive timer, which shows once it
        // is acknowledged; without keepalive the column then reads 0.
        let mut timer = timer_of(local, remote);
        for _ in 0..100 {
            if timer != Some(1) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            timer = timer_of(local, remote);
        }
        assert_eq!(
            timer,
            Some(2),
            "the connection {addr} runs no keepalive timer"
        );
    }
}
