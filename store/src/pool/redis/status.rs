//! Status messages over Redis pub/sub: PUBLISH on the shared connection, and
//! subscriptions shared by every socket of a process.
//!
//! One RESP3 connection per process carries every subscription: on one
//! node a [`ConnectionManager`], on a cluster the cluster's own connection
//! (classic PUBLISH reaches every node, so any node it picks serves, and
//! it moves on from a node that is down: no seed of `REDIS_URL` is needed
//! up). Both reconnect by themselves and subscribe again to every channel
//! they held (automatic resubscription). Incoming messages are pushed to one dispatcher
//! task, which hands each to the local subscribers of its channel through a
//! [`broadcast`] channel. A channel is subscribed in Redis while at least one
//! local subscriber holds it; the last one to drop unsubscribes.
//!
//! SUBSCRIBE and UNSUBSCRIBE go through one command task, in order, so an
//! unsubscribe queued by a dropping subscriber can never overtake the
//! subscribe of a newer one for the same channel (the command task skips an
//! unsubscribe whose channel has local subscribers again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{ProtocolVersion, PushInfo, PushKind, RedisResult, Value};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::conn::{cluster_builder, ConnSettings, RedisTarget};
use super::keys::status_channel;
use super::RedisPoolStore;
use crate::pool::{PoolError, StatusBus, StatusStream};

/// Messages a slow local subscriber may fall behind by before it skips some.
const SUBSCRIBER_BUFFER: usize = 64;

type Channels = Arc<Mutex<HashMap<String, broadcast::Sender<String>>>>;

enum Command {
    Subscribe(String, oneshot::Sender<RedisResult<()>>),
    Unsubscribe(String),
    /// A readiness check: the connection's answer to a `PING`.
    Check(oneshot::Sender<RedisResult<()>>),
}

/// The process's subscription connection and its local subscribers.
pub(crate) struct StatusHub {
    channels: Channels,
    commands: mpsc::UnboundedSender<Command>,
}

impl StatusHub {
    /// Opens the subscription connection to `target` (RESP3, whatever the
    /// URL says) and starts the dispatcher and command tasks; they stop
    /// when the hub is dropped.
    pub async fn connect(target: &RedisTarget, settings: ConnSettings) -> Result<Self, PoolError> {
        let (push_tx, push_rx) = mpsc::unbounded_channel::<PushInfo>();
        let conn = match target {
            RedisTarget::Node(url) => {
                let client = super::node::client(url)?;
                let info = client.get_connection_info().clone();
                let resp3 = info
                    .redis_settings()
                    .clone()
                    .set_protocol(ProtocolVersion::RESP3);
                let client = redis::Client::open(info.set_redis_settings(resp3))?;
                let config = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(settings.response_timeout))
                    .set_connection_timeout(Some(settings.connect_timeout))
                    .set_push_sender(push_tx)
                    .set_automatic_resubscription();
                let conn = client
                    .get_connection_manager_with_config(config.clone())
                    .await?;
                SubscriptionConn::Node {
                    conn,
                    remake: Box::new((client, config)),
                }
            }
            RedisTarget::Cluster(nodes) => {
                let client: ClusterClient = cluster_builder(nodes, settings)
                    .use_protocol(ProtocolVersion::RESP3)
                    .push_sender(push_tx)
                    .build()?;
                let conn = client.get_async_connection().await?;
                SubscriptionConn::Cluster {
                    conn,
                    client: Box::new(client),
                }
            }
        };
        let channels: Channels = Arc::default();
        let (commands, command_rx) = mpsc::unbounded_channel();
        tokio::spawn(dispatch(push_rx, channels.clone()));
        tokio::spawn(run_commands(command_rx, conn, channels.clone()));
        Ok(Self { channels, commands })
    }

    /// Subscribes to `channel`; in force in Redis when this returns.
    pub async fn subscribe(&self, channel: String) -> Result<StatusStream, PoolError> {
        let rx = {
            let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
            channels
                .entry(channel.clone())
                .or_insert_with(|| broadcast::channel(SUBSCRIBER_BUFFER).0)
                .subscribe()
        };
        let subscription = Subscription {
            rx,
            channel: channel.clone(),
            channels: self.channels.clone(),
            commands: self.commands.clone(),
        };
        let (done_tx, done_rx) = oneshot::channel();
        self.commands
            .send(Command::Subscribe(channel, done_tx))
            .map_err(|_| hub_gone())?;
        done_rx.await.map_err(|_| hub_gone())??;
        Ok(futures::stream::unfold(subscription, |mut sub| async move {
            loop {
                match sub.rx.recv().await {
                    Ok(message) => return Some((message, sub)),
                    Err(broadcast::error::RecvError::Lagged(skipped)) => {
                        tracing::warn!(skipped, "status subscriber fell behind");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed())
    }

    /// Whether the subscription's connection answers a `PING` now (one
    /// node; a cluster's connection is left to the cluster client). A
    /// connection that times out is replaced right after, so a later check
    /// passes once the new one is subscribed. The readiness probe asks it,
    /// so an instance whose WebSocket searches could not start is not
    /// ready.
    ///
    /// # Errors
    /// The `PING`'s failure (a timeout after the command timeout, a closed
    /// connection), or [`PoolError::Unavailable`] once the subscription's
    /// task stopped.
    pub async fn check(&self) -> Result<(), PoolError> {
        let (done_tx, done_rx) = oneshot::channel();
        self.commands
            .send(Command::Check(done_tx))
            .map_err(|_| hub_gone())?;
        done_rx.await.map_err(|_| hub_gone())??;
        Ok(())
    }
}

fn hub_gone() -> PoolError {
    PoolError::Unavailable("the status subscription task stopped")
}

/// One local subscriber; unsubscribes the channel in Redis if it is the last.
struct Subscription {
    rx: broadcast::Receiver<String>,
    channel: String,
    channels: Channels,
    commands: mpsc::UnboundedSender<Command>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        // `self.rx` still counts: it is dropped after this body.
        let last = channels
            .get(&self.channel)
            .is_some_and(|tx| tx.receiver_count() <= 1);
        if last {
            channels.remove(&self.channel);
            let _ = self
                .commands
                .send(Command::Unsubscribe(self.channel.clone()));
        }
    }
}

/// Hands each pushed message to the local subscribers of its channel.
async fn dispatch(mut push_rx: mpsc::UnboundedReceiver<PushInfo>, channels: Channels) {
    while let Some(push) = push_rx.recv().await {
        if push.kind != PushKind::Message {
            continue;
        }
        let mut data = push.data.into_iter();
        let (Some(channel), Some(payload)) = (data.next(), data.next()) else {
            continue;
        };
        let (Ok(channel), Ok(payload)) = (text(channel), text(payload)) else {
            continue;
        };
        let channels = channels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = channels.get(&channel) {
            let _ = tx.send(payload);
        }
    }
}

fn text(value: Value) -> Result<String, redis::ParsingError> {
    redis::from_redis_value(value)
}

/// The subscription connection: one node's or the cluster's.
enum SubscriptionConn {
    /// One node: the connection, and what makes another like it (the
    /// client and its settings).
    Node {
        conn: ConnectionManager,
        remake: Box<(redis::Client, ConnectionManagerConfig)>,
    },
    /// A cluster: the connection (its subscriptions on one node it
    /// picked), and the client that makes another.
    Cluster {
        conn: ClusterConnection,
        client: Box<ClusterClient>,
    },
}

/// How often the subscription's connection to one node is asked a `PING`:
/// one that does not answer within the command timeout is replaced (see
/// [`SubscriptionConn::replace`]).
const HEALTH_EVERY: Duration = Duration::from_secs(5);

impl SubscriptionConn {
    async fn subscribe(&mut self, channel: &str) -> RedisResult<()> {
        match self {
            Self::Node { conn, .. } => conn.subscribe(channel).await,
            Self::Cluster { conn, .. } => conn.subscribe(channel).await,
        }
    }

    async fn unsubscribe(&mut self, channel: &str) -> RedisResult<()> {
        match self {
            Self::Node { conn, .. } => conn.unsubscribe(channel).await,
            Self::Cluster { conn, .. } => conn.unsubscribe(channel).await,
        }
    }

    /// A connection to one node's answer to a `PING` (a cluster's is left
    /// to the cluster client: `Ok`).
    async fn ping(&mut self) -> RedisResult<()> {
        match self {
            Self::Node { conn, .. } => conn
                .send_packed_command(&redis::cmd("PING"))
                .await
                .map(drop),
            Self::Cluster { .. } => Ok(()),
        }
    }

    /// After a timeout on one node's connection: a new connection,
    /// subscribed to `channels`, in its place. A connection whose peer
    /// vanished without closing it (a failover that moved Redis's
    /// address) is never closed by the connection manager, which
    /// reconnects only on a closed connection (docs/operations.md, "What
    /// losing a dependency costs").
    /// On a cluster, a subscription that timed out is moved the same way:
    /// its node may be stalled (a replica stopped) while the cluster's
    /// slots all answer, and the client would keep it there.
    async fn replace(&mut self, channels: Vec<String>) -> RedisResult<()> {
        match self {
            Self::Node { conn, remake } => {
                let (client, config) = remake.as_ref();
                let mut fresh =
                    ConnectionManager::new_with_config(client.clone(), config.clone()).await?;
                if !channels.is_empty() {
                    fresh.subscribe(channels).await?;
                }
                *conn = fresh;
            }
            Self::Cluster { conn, client } => {
                let mut fresh = client.get_async_connection().await?;
                for channel in &channels {
                    fresh.subscribe(channel).await?;
                }
                *conn = fresh;
            }
        }
        tracing::warn!(
            "the status subscription's Redis connection timed out: replaced by a new one"
        );
        Ok(())
    }
}

/// The channels with local subscribers.
fn wanted(channels: &Channels) -> Vec<String> {
    channels
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .keys()
        .cloned()
        .collect()
}

/// Runs SUBSCRIBE and UNSUBSCRIBE in the order they were asked for, and
/// checks between them that a node's connection answers.
async fn run_commands(
    mut command_rx: mpsc::UnboundedReceiver<Command>,
    mut conn: SubscriptionConn,
    channels: Channels,
) {
    let mut health = tokio::time::interval(HEALTH_EVERY);
    health.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let command = tokio::select! {
            command = command_rx.recv() => command,
            _ = health.tick() => {
                let silent = is_timeout(&conn.ping().await);
                replace_if(silent, &mut conn, &channels).await;
                continue;
            }
        };
        let Some(command) = command else {
            break;
        };
        match command {
            Command::Subscribe(channel, done) => {
                if done.is_closed() {
                    // Its start stopped waiting (it re-reads instead).
                    continue;
                }
                let mut got = conn.subscribe(&channel).await;
                if got.as_ref().is_err_and(redis::RedisError::is_timeout) {
                    // The channel is among those wanted: the new
                    // connection subscribes to it.
                    got = conn.replace(wanted(&channels)).await;
                }
                let _ = done.send(got);
            }
            Command::Check(done) => {
                if done.is_closed() {
                    // Its probe gave up while this task was busy.
                    continue;
                }
                let answer = conn.ping().await;
                let silent = is_timeout(&answer);
                let _ = done.send(answer);
                replace_if(silent, &mut conn, &channels).await;
            }
            Command::Unsubscribe(channel) => {
                let wanted = channels
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains_key(&channel);
                if !wanted {
                    if let Err(error) = conn.unsubscribe(&channel).await {
                        tracing::warn!(%error, "status unsubscribe failed");
                    }
                }
            }
        }
    }
}

fn is_timeout(answer: &RedisResult<()>) -> bool {
    answer.as_ref().is_err_and(redis::RedisError::is_timeout)
}

/// Replaces the connection when it was found `silent` (a `PING` timed out).
async fn replace_if(silent: bool, conn: &mut SubscriptionConn, channels: &Channels) {
    if silent {
        if let Err(error) = conn.replace(wanted(channels)).await {
            tracing::warn!(%error, "a new status subscription connection failed");
        }
    }
}

impl RedisPoolStore {
    /// The status subscription's readiness ([`StatusHub::check`]); `Ok`
    /// while no WebSocket search of this process has opened it.
    pub(crate) async fn status_ready(&self) -> Result<(), PoolError> {
        match self.inner.status.get() {
            Some(hub) => hub.check().await,
            None => Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl StatusBus for RedisPoolStore {
    async fn publish_status(&self, ticket_id: &str, json: &str) -> Result<(), PoolError> {
        let channel = status_channel(&self.inner.prefix, ticket_id);
        let _receivers: i64 =
            redis::AsyncCommands::publish(&mut self.conn(), channel, json).await?;
        Ok(())
    }

    async fn subscribe_status(&self, ticket_id: &str) -> Result<StatusStream, PoolError> {
        let hub = self
            .inner
            .status
            .get_or_try_init(|| StatusHub::connect(&self.inner.target, self.inner.settings))
            .await?;
        hub.subscribe(status_channel(&self.inner.prefix, ticket_id))
            .await
    }
}
