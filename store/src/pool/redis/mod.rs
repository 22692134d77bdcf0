//! The Redis pool store: the live pools shared by every API and worker replica.
//!
//! # Design
//!
//! **One hash tag per game mode.** Every key of a mode starts with
//! `P:{<projectId>/<mode>}:` (`P` is the configured prefix, `mp` by default,
//! so tests and CI runs isolate on one Redis), so every key of one mode sits
//! in one Redis Cluster slot and each script below runs on one node, while
//! one project's modes spread over the cluster's masters. What spans a
//! project's modes sits under the project's own tag `{<projectId>}`, in
//! another slot: its live-search counter (the tier's
//! `maxConcurrentSearches`), the modes with searches, the pending tickets
//! and the `project` scope's player reservations. No script touches both,
//! so those are kept in steps around the mode's script (see `live`): the
//! quota may be overshot by the starts in flight at one instant, never by
//! more. Ticket records carry no tag at all and spread over every slot.
//!
//! **One key lists the projects.** `P:projects` (the registry of projects
//! with searches) sits in a slot of its own. No script touches it: a
//! process pipelines a ZADD of it before an add's first step in the same
//! round trip (sends it alone when that step sends nothing), once a minute
//! per project, and the worker prunes it
//! with a script on that key alone (see `projects`). It is how the worker
//! finds the pools of a project the database no longer has.
//!
//! **A search is live exactly while it has a field in the mode's `pool`
//! hash.** Every other key (`players`, `deadlines`, `pings`, `reasons`) is an
//! index or annotation of that field, and the scripts that add or remove a
//! field update all of them together, with one exception: a claim leaves
//! its searches' `deadlines` entries, which the expiry sweep drops when it
//! reads them (removing 100 000 sorted-set members cost a claim more than
//! everything else it does), so liveness is never read from `deadlines`. Leaving the pool writes an `ended`
//! record (matched, cancelled, expired, failed), kept between one and two
//! retentions in time-bucketed hashes; the same script removes the field, so
//! a search ends exactly once: a cancel that loses the race against a claim
//! finds no field and reads `matched`; a claim that loses finds a field
//! missing and claims nothing.
//!
//! **The pool's rules are one script.** Adding a search is one script in
//! the mode's slot (uniqueness per ticket and per player, spent tickets, the
//! deadline index), between the project's two steps (see `live`), on one
//! shared multiplexed [`RedisConn`] (one node or a cluster, see `conn`),
//! which reconnects by itself. Starting a search from a ticket another
//! process generated reads the ticket's record first (see `start`): its JSON
//! begins with the pool entry's fields, so the entry is spliced from it
//! without re-encoding.
//! Scripts are sent by EVALSHA and loaded on a
//! `NOSCRIPT` answer. A snapshot is HVALS of compact JSON plus HGETALL of the
//! ping samples, pipelined: one round trip for 100 000 searches.
//!
//! **Claims are fenced.** A worker holds a mode's `lease` (a key with a PX
//! expiry) under a fencing token from the mode's `fence` counter, which only
//! grows. The claim script compares the token with the current lease before
//! touching anything, so a worker that paused past its lease cannot commit
//! next to the one that took over: a lock alone would be advisory.
//!
//! **The outbox is a stream.** The claim script XADDs the match record to the
//! mode's `outbox` stream in the same step that removes the searches, so a
//! match cannot be lost between the claim and PostgreSQL. Consumers read it
//! through one consumer group; entries a consumer took but did not ACK for
//! `min_idle` are taken over by XAUTOCLAIM (a dead worker's matches are
//! recorded by another). Acknowledged entries are deleted.
//!
//! **Status changes go over pub/sub**, one channel per ticket, because the
//! API instance that holds a client's WebSocket is not the worker that
//! matched it. Pub/sub is at most once, so a subscriber reads the current
//! state once subscribed. Subscriptions share one RESP3 connection per
//! process (see `status`).
//!
//! The key layout is documented field by field on `keys::ModeKeys`.
//!
//! # Files
//!
//! One file per part of the interface, each running its own scripts (in
//! `scripts/`, prefixed with `common.lua` where they remove searches):
//! `searches` (add, end, touch, expire, pings, waiting reasons), `reads`,
//! `projects` (the registry of projects with searches), `live` (the
//! project's counter, modes and player reservations), `lane` (an add's
//! project step and the quota reads, batched per project), `claims`, `leases`,
//! `outbox`, `status` (pub/sub), `start` (a search started from a stored
//! ticket) and `keys` (every key's name).

use std::time::Duration;

use redis::Script;

mod backfills;
use tokio::sync::OnceCell;

use super::types::median;
use super::{EndedSearch, ModeKey, PoolError, Search};
use keys::ModeKeys;
use status::StatusHub;

mod claims;
mod conn;
pub use conn::{RedisConn, RedisTarget};
pub use node::NodeConn;
mod healed;
pub(crate) mod keys;
mod lane;
mod leases;
mod live;
mod node;
mod outbox;
mod persistence;
pub use persistence::Persistence;
mod projects;
mod proposals;
mod reads;
mod releases;
mod searches;
mod start;
mod status;

/// How to reach Redis and name the keys.
#[derive(Debug, Clone)]
pub struct RedisPoolConfig {
    /// `redis://host:port/db` (or `rediss://`).
    pub url: String,
    /// The first part of every key and channel (`mp` by default); tests use a
    /// random one each.
    pub prefix: String,
    /// How long an ended search's record is kept at least (status reads,
    /// `TICKET_ALREADY_MATCHED`); at most about twice that. Should outlast
    /// the longest ticket TTL.
    pub ended_retention: Duration,
    /// How long one command may wait for its answer before it fails. A
    /// snapshot of 100 000 searches is several megabytes: keep this well
    /// above its transfer time.
    pub response_timeout: Duration,
    /// How long one connection attempt may take (2 s by default). With
    /// [`Self::reconnect_retries`] it bounds how long a command waits while
    /// Redis is down: a command issued during a reconnection waits for it.
    pub connect_timeout: Duration,
    /// Connection attempts after the first before a reconnection gives up
    /// (1 by default, 100 ms apart); the next command tries again.
    pub reconnect_retries: usize,
}

impl RedisPoolConfig {
    /// The defaults: prefix `mp`, a 24-hour retention of ended searches, a
    /// 5-second response timeout, a 2-second connect timeout, 1 retry.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefix: "mp".into(),
            ended_retention: crate::pool::ENDED_RETENTION,
            response_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            reconnect_retries: 1,
        }
    }
}

/// The scripts, each prefixed with the shared helpers where it needs them.
struct Scripts {
    add: Script,
    end: Script,
    expire: Script,
    claim: Script,
    touch: Script,
    ping: Script,
    reasons: Script,
    lease: Script,
    workers: Script,
    outbox_read: Script,
    forget_project: Script,
    propose: Script,
    answer: Script,
    proposal: Script,
    finish_proposal: Script,
    fill: Script,
    backfill_change: Script,
    release: Script,
    revoke: Script,
}

impl Scripts {
    fn new() -> Self {
        Self {
            add: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/add_search.lua")
            )),
            end: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/end_search.lua")
            )),
            expire: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/expire.lua")
            )),
            claim: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/claim.lua")
            )),
            touch: Script::new(include_str!("scripts/touch.lua")),
            ping: Script::new(include_str!("scripts/ping.lua")),
            reasons: Script::new(include_str!("scripts/reasons.lua")),
            lease: Script::new(include_str!("scripts/lease.lua")),
            workers: Script::new(include_str!("scripts/workers.lua")),
            outbox_read: Script::new(include_str!("scripts/outbox_read.lua")),
            forget_project: Script::new(include_str!("scripts/forget_project.lua")),
            propose: Script::new(include_str!("scripts/propose.lua")),
            answer: Script::new(include_str!("scripts/answer.lua")),
            proposal: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/proposal_common.lua"),
                include_str!("scripts/proposal.lua")
            )),
            finish_proposal: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/proposal_common.lua"),
                include_str!("scripts/finish_proposal.lua")
            )),
            fill: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/fill.lua")
            )),
            backfill_change: Script::new(include_str!("scripts/backfill_change.lua")),
            release: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/release.lua")
            )),
            revoke: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/revoke.lua")
            )),
        }
    }
}

/// The pool store on Redis. Cheap to clone: clones share one connection.
///
/// A multiplexed connection answers in order, so a large answer (a snapshot)
/// delays the commands queued behind it: a process that both snapshots big
/// pools and serves players (`matchplane dev`) may open one store for each.
#[derive(Clone)]
pub struct RedisPoolStore {
    inner: std::sync::Arc<Inner>,
}

struct Inner {
    /// Where the pools are, and how to wait for them: the status
    /// subscription opens its own connection there (`status`).
    target: RedisTarget,
    settings: conn::ConnSettings,
    conn: RedisConn,
    prefix: String,
    retention_secs: u64,
    scripts: Scripts,
    /// The project's side of the pools (see `live`).
    live: live::LiveScripts,
    /// The pool sizes this process applied to their projects last.
    applied: live::Applied,
    /// The projects' batched steps (see `lane`).
    lanes: lane::Lanes,
    /// The shared subscription connection, opened at the first subscribe.
    status: OnceCell<StatusHub>,
    /// Projects this process wrote into the registry lately, with when
    /// (see `projects`).
    noted: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

impl RedisPoolStore {
    /// Connects (one multiplexed connection, reconnecting by itself).
    pub async fn connect(config: RedisPoolConfig) -> Result<Self, PoolError> {
        let target = RedisTarget::parse(&config.url);
        let settings = conn::ConnSettings {
            response_timeout: config.response_timeout,
            connect_timeout: config.connect_timeout,
            retries: config.reconnect_retries,
        };
        let conn = RedisConn::connect(&target, settings).await?;
        Ok(Self {
            inner: std::sync::Arc::new(Inner {
                target,
                settings,
                conn,
                prefix: config.prefix,
                retention_secs: config.ended_retention.as_secs().max(1),
                scripts: Scripts::new(),
                live: live::LiveScripts::new(),
                applied: live::Applied::default(),
                lanes: lane::Lanes::default(),
                status: OnceCell::new(),
                noted: std::sync::Mutex::default(),
            }),
        })
    }

    /// The key prefix in use.
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    fn keys(&self, mode: &ModeKey) -> ModeKeys {
        ModeKeys::new(&self.inner.prefix, mode)
    }

    /// The shared multiplexed connection (the ticket store's too).
    pub(crate) fn conn(&self) -> RedisConn {
        self.inner.conn.clone()
    }

    /// Whether the store is on a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        self.inner.conn.is_cluster()
    }

    /// The shared connection, for tests that look at Redis directly.
    #[cfg(test)]
    pub(crate) fn inner_conn(&self) -> RedisConn {
        self.conn()
    }

    /// The ended-record buckets of now (`[current, next, previous]`; see
    /// `ModeKeys::ended`). The one place the store reads the wall clock: only
    /// to pick a bucket, never for a rule of the pool.
    fn ended_keys(&self, keys: &ModeKeys) -> [String; 3] {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        keys.ended(now / self.inner.retention_secs)
    }

    /// How long an ended-record bucket lives after its last write (seconds).
    fn bucket_lifetime(&self) -> u64 {
        self.inner.retention_secs.saturating_mul(3)
    }

    /// The record's JSON; the scripts that remove a live search append its
    /// `queuedAt` before the closing brace (see `with_queued_at` in
    /// `scripts/common.lua`).
    fn ended_json(&self, ended: &EndedSearch) -> Result<String, PoolError> {
        serde_json::to_string(ended).map_err(|e| PoolError::Corrupt(e.to_string()))
    }
}

/// Milliseconds of a duration as Redis wants them (at least 1).
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// Deletes every key under `prefix` (`<prefix>:*`) on the Redis at `url`
/// (one node, or every master of a cluster), in batches of 500, and returns
/// how many went: for test harnesses (each test's own prefix) and for
/// retiring a prefix. Blocking: it opens its own synchronous connections, so
/// it can run in a `Drop`.
///
/// # Errors
/// The Redis error if a connection or a command fails.
pub fn delete_prefix_blocking(url: &str, prefix: &str) -> redis::RedisResult<usize> {
    match RedisTarget::parse(url) {
        RedisTarget::Node(url) => delete_prefix_on_node(&url, prefix, false),
        RedisTarget::Cluster(nodes) => {
            let seed = nodes.first().map_or("", String::as_str);
            let mut total = 0;
            for master in conn::cluster_masters_blocking(seed)? {
                total += delete_prefix_on_node(&master, prefix, true)?;
            }
            Ok(total)
        }
    }
}

/// Scans one node for `<prefix>:*` and deletes what it finds; a cluster
/// node takes one key per DEL (the keys sit in many slots).
fn delete_prefix_on_node(url: &str, prefix: &str, one_by_one: bool) -> redis::RedisResult<usize> {
    use redis::Commands as _;
    let client = redis::Client::open(url)?;
    let mut conn = client.get_connection()?;
    let pattern = format!("{prefix}:*");
    let keys: Vec<String> = conn
        .scan_match::<_, String>(&pattern)?
        .filter_map(Result::ok)
        .collect();
    if one_by_one {
        for key in &keys {
            let () = redis::cmd("DEL").arg(key).query(&mut conn)?;
        }
    } else {
        for chunk in keys.chunks(500) {
            let () = redis::cmd("DEL").arg(chunk).query(&mut conn)?;
        }
    }
    Ok(keys.len())
}

fn parse_search(json: &str) -> Result<Search, PoolError> {
    serde_json::from_str(json).map_err(|e| PoolError::Corrupt(format!("pool entry: {e}")))
}

/// The median of a `pings` field (`"12,15.5,13"`).
fn parse_ping(samples: &str) -> Result<Option<f64>, PoolError> {
    let values = samples
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<f64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PoolError::Corrupt(format!("ping samples: {e}")))?;
    Ok(median(&values))
}

fn parse_ended(json: &str) -> Result<EndedSearch, PoolError> {
    serde_json::from_str(json).map_err(|e| PoolError::Corrupt(format!("ended record: {e}")))
}
