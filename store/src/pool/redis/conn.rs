//! One connection type over a single Redis node or a Redis Cluster.
//!
//! `REDIS_URL` names either one node (`redis://host:port/db`,
//! `rediss://…`) or a cluster: `redis+cluster://host1:port,host2:port`
//! (`rediss+cluster://` for TLS), or the cluster client's own form, a
//! comma-separated list of node URLs (`redis://host1:port,redis://host2:port`).
//! [`RedisConn`] implements [`ConnectionLike`], so every command, script and
//! pipeline of the stores runs unchanged on both.
//!
//! On a cluster the connection follows `MOVED` and `ASK` redirections and
//! refreshes its slot map by itself. A pipeline whose commands sit in
//! different slots (a cluster refuses it with `CROSSSLOT`) is sent again one
//! command at a time; a transaction (`MULTI`) never is.

use std::time::Duration;

use super::healed::{Dial, Healed};
use super::node::{self, NodeConn};
use redis::aio::{ConnectionLike, ConnectionManagerConfig};
use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ErrorKind, Pipeline, RedisFuture, RedisResult, ServerErrorKind, Value};

/// Where `REDIS_URL` points: one node, or the seed nodes of a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// One node (`redis://host:port/db`).
    Node(String),
    /// A cluster, by the URLs of some of its nodes (one is enough; the rest
    /// are found from its slot map).
    Cluster(Vec<String>),
}

impl RedisTarget {
    /// Reads a `REDIS_URL`: `redis+cluster://h1:p1,h2:p2` (or
    /// `rediss+cluster://`) and comma-separated node URLs name a cluster;
    /// anything else is one node. A path or query after the last host of a
    /// cluster URL is kept on every node (a cluster has only database 0).
    pub fn parse(url: &str) -> Self {
        let url = url.trim();
        for (scheme, plain) in [
            ("redis+cluster://", "redis://"),
            ("rediss+cluster://", "rediss://"),
        ] {
            if let Some(rest) = url.strip_prefix(scheme) {
                let (userinfo, hosts) = match rest.rsplit_once('@') {
                    Some((user, hosts)) => (format!("{user}@"), hosts),
                    None => (String::new(), rest),
                };
                let (hosts, tail) = match hosts.find(['/', '?']) {
                    Some(i) => hosts.split_at(i),
                    None => (hosts, ""),
                };
                let nodes = hosts
                    .split(',')
                    .map(str::trim)
                    .filter(|h| !h.is_empty())
                    .map(|h| format!("{plain}{userinfo}{h}{tail}"))
                    .collect();
                return Self::Cluster(nodes);
            }
        }
        if url.contains(',') {
            return Self::Cluster(
                url.split(',')
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .map(str::to_owned)
                    .collect(),
            );
        }
        Self::Node(url.to_owned())
    }

    /// The URL of one node: the node itself, or a cluster's first seed.
    pub fn first_node(&self) -> &str {
        match self {
            Self::Node(url) => url,
            Self::Cluster(nodes) => nodes.first().map_or("", String::as_str),
        }
    }
}

/// Retries a cluster command gets at least. Following a `MOVED` or an
/// `ASK` takes one (and an `ASK` can come back as `MOVED`: the client sends
/// `ASKING` ahead of the command on a connection other commands share, or
/// ahead of a pipeline whose later commands it does not cover), so does
/// waiting out a `TRYAGAIN` while a slot migrates, or reconnecting to a
/// master that restarted. With one retry, a command that met a moving slot
/// or a restarted master failed where a second try would have succeeded.
const CLUSTER_MIN_RETRIES: usize = 4;

/// Bounds of the wait before a cluster retry that waits (`TRYAGAIN`,
/// `CLUSTERDOWN`, a reconnection), in milliseconds: 100·2ⁿ within them,
/// jittered, so four retries wait about a second in all (the client's
/// default waits at least 1.28 s before each).
const CLUSTER_RETRY_WAIT_MS: (u64, u64) = (50, 500);

/// How long to wait and how often to retry (see `RedisPoolConfig`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnSettings {
    pub response_timeout: Duration,
    pub connect_timeout: Duration,
    pub retries: usize,
}

/// The cluster client's settings for `nodes`: its waits and its retries
/// (the commands' connection and the status subscription's alike).
pub(crate) fn cluster_builder(nodes: &[String], settings: ConnSettings) -> ClusterClientBuilder {
    ClusterClient::builder(nodes.iter().map(String::as_str))
        .response_timeout(settings.response_timeout)
        .connection_timeout(settings.connect_timeout)
        .retries(u32::try_from(settings.retries.max(CLUSTER_MIN_RETRIES)).unwrap_or(u32::MAX))
        .min_retry_wait(CLUSTER_RETRY_WAIT_MS.0)
        .max_retry_wait(CLUSTER_RETRY_WAIT_MS.1)
        .retry_wait_formula(100, 2)
        .tcp_settings(node::tcp_settings())
}

/// How a cluster connection is made: the cluster client's own, which
/// routes by key slot, follows `MOVED`/`ASK` and reconnects to a node that
/// went away by itself.
pub struct ClusterDial {
    client: ClusterClient,
    response_timeout: Duration,
}

impl Dial for ClusterDial {
    type Conn = ClusterConnection;
    /// A `PING` goes to any node, maybe one that stalled while the rest
    /// serve: only two unanswered in a row (10 s) count as the
    /// connection's silence (its slot map's refresh that never ends).
    const SILENT_PINGS: u32 = 2;
    /// A timeout may be one master's alone: the client finds its
    /// replacement itself.
    const TIMEOUT_REPLACES: bool = false;

    async fn dial(&self) -> RedisResult<ClusterConnection> {
        self.client.get_async_connection().await
    }

    fn response_timeout(&self) -> Option<Duration> {
        Some(self.response_timeout)
    }
}

/// A shared cluster connection, replaced when it stops answering
/// ([`super::healed`]).
pub type ClusterConn = Healed<ClusterDial>;

/// A shared, reconnecting, multiplexed connection to one node or a cluster.
/// Cheap to clone: clones share the connection.
#[derive(Clone)]
pub enum RedisConn {
    /// One node.
    Node(NodeConn),
    /// A cluster (routes by key slot, follows `MOVED`/`ASK`).
    Cluster(ClusterConn),
}

impl RedisConn {
    /// Connects to `target`.
    pub(crate) async fn connect(target: &RedisTarget, settings: ConnSettings) -> RedisResult<Self> {
        match target {
            RedisTarget::Node(url) => {
                let client = node::client(url)?;
                let manager = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(settings.response_timeout))
                    .set_connection_timeout(Some(settings.connect_timeout))
                    .set_number_of_retries(settings.retries)
                    .set_min_delay(Duration::from_millis(100))
                    .set_max_delay(Duration::from_millis(500));
                Ok(Self::Node(node::connect(client, manager).await?))
            }
            RedisTarget::Cluster(nodes) => {
                let dial = ClusterDial {
                    client: cluster_builder(nodes, settings).build()?,
                    response_timeout: settings.response_timeout,
                };
                Ok(Self::Cluster(Healed::connect(dial, 0).await?))
            }
        }
    }

    /// Whether this is a cluster connection.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster(_))
    }
}

/// The URLs of a cluster's masters, from `CLUSTER NODES` asked of `seed`
/// (blocking; for maintenance such as deleting a prefix). The seed URL's
/// scheme, credentials and query are kept for each master.
pub(crate) fn cluster_masters_blocking(seed: &str) -> RedisResult<Vec<String>> {
    let client = redis::Client::open(seed)?;
    let mut conn = client.get_connection()?;
    let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut conn)?;
    let (scheme, rest) = seed.split_once("://").unwrap_or(("redis", seed));
    let userinfo = rest
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    let tail = rest.find(['/', '?']).map_or("", |i| &rest[i..]);
    Ok(nodes
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let flags = fields.get(2)?;
            if !flags.contains("master") || flags.contains("fail") {
                return None;
            }
            // `ip:port@cport[,hostname]`
            let addr = fields.get(1)?.split(['@', ',']).next()?;
            Some(format!("{scheme}://{userinfo}{addr}{tail}"))
        })
        .collect())
}

/// A command that met a connection found broken (a Redis restart closed
/// it, maybe long ago: the connection manager learns of it only from the
/// next command). The manager reconnects on that error, and the command is
/// sent once more on the new connection, so the first request after a
/// restart is answered rather than refused. A timeout is not sent again (a
/// Redis that does not answer is refused at once, `503`). A command whose
/// reply alone was lost may so run twice; the stores' scripts check state
/// before they change it, so a second run answers as if it were a repeat.
pub(super) fn is_broken(e: &redis::RedisError) -> bool {
    e.is_connection_dropped() && !e.is_timeout()
}

fn is_cross_slot(e: &redis::RedisError) -> bool {
    matches!(e.kind(), ErrorKind::Server(ServerErrorKind::CrossSlot))
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Node(c) => Box::pin(c.req_packed_command(cmd)),
            Self::Cluster(c) => Box::pin(c.req_packed_command(cmd)),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Node(c) => Box::pin(c.req_packed_commands(pipeline, offset, count)),
            Self::Cluster(c) => Box::pin(async move {
                match c.req_packed_commands(pipeline, offset, count).await {
                    Err(e) if is_cross_slot(&e) && !pipeline.is_transaction() => {
                        // One command at a time, each to its own slot's node.
                        let mut values = Vec::with_capacity(pipeline.len());
                        for cmd in pipeline.cmd_iter() {
                            values.push(c.req_packed_command(cmd).await?);
                        }
                        Ok(values.into_iter().skip(offset).take(count).collect())
                    }
                    other => other,
                }
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Node(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RedisTarget;

    #[test]
    fn parses_cluster_urls() {
        assert_eq!(
            RedisTarget::parse("redis+cluster://a:7101,b:7102"),
            RedisTarget::Cluster(vec!["redis://a:7101".into(), "redis://b:7102".into()])
        );
        assert_eq!(
            RedisTarget::parse("rediss+cluster://u:pw@a:1,b:2/0?protocol=resp3"),
            RedisTarget::Cluster(vec![
                "rediss://u:pw@a:1/0?protocol=resp3".into(),
                "rediss://u:pw@b:2/0?protocol=resp3".into()
            ])
        );
        assert_eq!(
            RedisTarget::parse("redis://a:1,redis://b:2"),
            RedisTarget::Cluster(vec!["redis://a:1".into(), "redis://b:2".into()])
        );
        assert_eq!(
            RedisTarget::parse("redis://10.0.0.7:7000/3"),
            RedisTarget::Node("redis://10.0.0.7:7000/3".into())
        );
        assert_eq!(
            RedisTarget::parse("redis+cluster://a:1").first_node(),
            "redis://a:1"
        );
    }
}
