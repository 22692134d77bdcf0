//! The Redis pool store: the live pools shared by every API and worker replica.
//!
//! # Design
//!
//! **One hash tag per project.** Every key of a project starts with
//! `P:{<projectId>}:` (`P` is the configured prefix, `mp` by default, so tests
//! and CI runs isolate on one Redis). Every key of one game mode therefore
//! sits in one Redis Cluster slot, as SPEC 1 asks, so each script below runs
//! on one node. The tag is the project rather than the mode because the
//! project's live-search counter (the tier's `maxConcurrentSearches`) must
//! change in the same atomic step as the pool it counts: adding a search,
//! ending one and claiming a group all touch it, and a script cannot touch
//! two slots. The price: one project's modes cannot spread over several
//! Cluster nodes; many projects still spread.
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
//! **The hot path is one round trip.** Adding a search is one script
//! (uniqueness per ticket and per player, spent tickets, the quota, the
//! deadline index) on one shared multiplexed [`ConnectionManager`], which
//! reconnects by itself. Starting a search from a ticket another process
//! generated is one script too (`scripts/start_search.lua`, see
//! [`crate::tickets::TicketStore::start_search`]): the ticket's record sits
//! under the same project hash tag, and its JSON begins with the pool
//! entry's fields, so the script splices the entry without re-encoding it.
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
//! process (see `redis_status`).
//!
//! The key layout is documented field by field on `redis_keys::ModeKeys`.

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Script};
use tokio::sync::OnceCell;

use super::redis_keys::{live_key, modes_key, status_channel, ModeKeys, OUTBOX_GROUP};
use super::redis_status::StatusHub;
use super::types::{check_claim, median, wall_clock, MAX_CLAIM};
mod start;

use super::{
    AddSearchError, Claim, ClaimOutcome, EndOutcome, EndResult, Ended, EndedSearch, LiveSearch,
    ModeKey, OutboxEntry, PoolError, PoolStore, Search, SearchState, StatusStream,
};

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
            ended_retention: Duration::from_secs(24 * 3600),
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
    outbox_read: Script,
    start: Script,
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
            outbox_read: Script::new(include_str!("scripts/outbox_read.lua")),
            start: Script::new(concat!(
                include_str!("scripts/common.lua"),
                include_str!("scripts/start_search.lua")
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
    client: redis::Client,
    conn: ConnectionManager,
    prefix: String,
    retention_secs: u64,
    scripts: Scripts,
    /// The shared subscription connection, opened at the first subscribe.
    status: OnceCell<StatusHub>,
}

impl RedisPoolStore {
    /// Connects (one multiplexed connection, reconnecting by itself).
    pub async fn connect(config: RedisPoolConfig) -> Result<Self, PoolError> {
        let client = redis::Client::open(config.url.as_str())?;
        let manager = ConnectionManagerConfig::new()
            .set_response_timeout(Some(config.response_timeout))
            .set_connection_timeout(Some(config.connect_timeout))
            .set_number_of_retries(config.reconnect_retries)
            .set_min_delay(Duration::from_millis(100))
            .set_max_delay(Duration::from_millis(500));
        let conn = ConnectionManager::new_with_config(client.clone(), manager).await?;
        Ok(Self {
            inner: std::sync::Arc::new(Inner {
                client,
                conn,
                prefix: config.prefix,
                retention_secs: config.ended_retention.as_secs().max(1),
                scripts: Scripts::new(),
                status: OnceCell::new(),
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
    pub(crate) fn conn(&self) -> ConnectionManager {
        self.inner.conn.clone()
    }

    /// The shared connection, for tests that look at Redis directly.
    #[cfg(test)]
    pub(crate) fn inner_conn(&self) -> ConnectionManager {
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

    /// One pass of the expiry sweep over at most `limit` due entries of the
    /// deadline index: how many it read, and the tickets it expired.
    async fn expire_batch(
        &self,
        mode: &ModeKey,
        now: f64,
        limit: usize,
    ) -> Result<(usize, Vec<String>), PoolError> {
        let keys = self.keys(mode);
        let due: Vec<String> = self
            .conn()
            .zrangebyscore_limit(&keys.deadlines, "-inf", now, 0, limit as isize)
            .await?;
        if due.is_empty() {
            return Ok((0, Vec::new()));
        }
        let mut call = self.inner.scripts.expire.prepare_invoke();
        call.key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(&keys.live)
            .key(&keys.modes)
            .key(&self.ended_keys(&keys)[0]);
        call.arg(now)
            .arg(self.ended_json(&EndedSearch::new(Ended::Expired, now))?)
            .arg(self.bucket_lifetime())
            .arg(&mode.mode);
        for ticket in &due {
            call.arg(ticket);
        }
        Ok((due.len(), call.invoke_async(&mut self.conn()).await?))
    }

    /// One run of the claim script over `batch` (see `scripts/claim.lua`).
    async fn claim_batch(
        &self,
        mode: &ModeKey,
        keys: &ModeKeys,
        lease_token: u64,
        batch: &[Claim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        let mut call = self.inner.scripts.claim.prepare_invoke();
        call.key(&keys.lease)
            .key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(&keys.live)
            .key(&keys.outbox)
            .key(&keys.modes)
            .key(&self.ended_keys(keys)[0]);
        call.arg(lease_token)
            .arg(self.bucket_lifetime())
            .arg(&mode.mode);
        let now = wall_clock();
        for claim in batch {
            let ended = self.ended_json(&EndedSearch::new(
                Ended::Matched {
                    match_id: claim.match_id.clone(),
                },
                now,
            ))?;
            call.arg(&claim.match_id)
                .arg(ended)
                .arg(&claim.record_json)
                .arg(claim.ticket_ids.len());
            for ticket in &claim.ticket_ids {
                call.arg(ticket);
            }
            for player in &claim.player_ids {
                call.arg(player);
            }
        }
        let reply: Vec<String> = call.invoke_async(&mut self.conn()).await?;
        parse_claim_reply(reply, batch.len())
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

/// Deletes every key under `prefix` (`<prefix>:*`) on the Redis at `url`,
/// in batches of 500, and returns how many went: for test harnesses (each
/// test's own prefix) and for retiring a prefix. Blocking: it opens its own
/// synchronous connection, so it can run in a `Drop`.
///
/// # Errors
/// The Redis error if the connection or a command fails.
pub fn delete_prefix_blocking(url: &str, prefix: &str) -> redis::RedisResult<usize> {
    use redis::Commands as _;
    let client = redis::Client::open(url)?;
    let mut conn = client.get_connection()?;
    let pattern = format!("{prefix}:*");
    let keys: Vec<String> = conn
        .scan_match::<_, String>(&pattern)?
        .filter_map(Result::ok)
        .collect();
    for chunk in keys.chunks(500) {
        let () = redis::cmd("DEL").arg(chunk).query(&mut conn)?;
    }
    Ok(keys.len())
}

/// Passes of one `expire_due` call at most (each reads up to its limit).
const MAX_EXPIRE_PASSES: usize = 20;

/// Tickets one claim script run takes at most (its groups are whole).
const CLAIM_BATCH_TICKETS: usize = 2_000;

/// The claim script's answer for `groups` groups, in order.
fn parse_claim_reply(reply: Vec<String>, groups: usize) -> Result<Vec<ClaimOutcome>, PoolError> {
    let corrupt = |what: &str| PoolError::Corrupt(format!("claim answered {what}"));
    if reply.first().map(String::as_str) == Some("lease_lost") {
        return Ok(vec![ClaimOutcome::LeaseLost; groups]);
    }
    let mut outcomes = Vec::with_capacity(groups);
    let mut words = reply.into_iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "claimed" => outcomes.push(ClaimOutcome::Claimed {
                outbox_id: words.next().ok_or_else(|| corrupt("no outbox id"))?,
            }),
            "conflict" => {
                let count: usize = words
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| corrupt("no count of gone tickets"))?;
                let gone: Vec<String> = words.by_ref().take(count).collect();
                if gone.len() != count {
                    return Err(corrupt("fewer gone tickets than counted"));
                }
                outcomes.push(ClaimOutcome::Conflict { gone });
            }
            other => return Err(corrupt(&format!("{other:?}"))),
        }
    }
    if outcomes.len() != groups {
        return Err(corrupt(&format!(
            "{} outcomes for {groups} groups",
            outcomes.len()
        )));
    }
    Ok(outcomes)
}

/// The add script's answer (also the start script's refusals): `Ok` for
/// `{'ok'}`, the refusal otherwise. `script` names it in a corrupt answer.
fn add_reply(reply: &[String], max_live: Option<u64>, script: &str) -> Result<(), AddSearchError> {
    match reply.first().map(String::as_str) {
        Some("ok") => Ok(()),
        Some("active") => Err(AddSearchError::SearchAlreadyActive),
        Some("matched") => Err(AddSearchError::TicketAlreadyMatched),
        Some("quota") => Err(AddSearchError::QuotaExceeded {
            limit: max_live.unwrap_or_default(),
        }),
        Some("player") => Err(AddSearchError::PlayerAlreadySearching {
            ticket_id: reply.get(1).cloned().unwrap_or_default(),
        }),
        other => Err(PoolError::Corrupt(format!("{script} answered {other:?}")).into()),
    }
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

#[async_trait]
impl PoolStore for RedisPoolStore {
    async fn add_search(
        &self,
        mode: &ModeKey,
        search: &Search,
        deadline: f64,
        max_live: Option<u64>,
    ) -> Result<(), AddSearchError> {
        let keys = self.keys(mode);
        let ended = self.ended_keys(&keys);
        let stored = Search {
            ping_ms: None,
            ..search.clone()
        };
        let json = serde_json::to_string(&stored).map_err(|e| PoolError::Corrupt(e.to_string()))?;
        let mut invocation = self.inner.scripts.add.prepare_invoke();
        for key in keys.add_live(&ended) {
            invocation.key(key);
        }
        let reply: Vec<String> = invocation
            .arg(search.ticket_id.as_str())
            .arg(search.player_id.as_str())
            .arg(json)
            .arg(deadline)
            .arg(max_live.map(|l| l.to_string()).unwrap_or_default())
            .arg(&mode.mode)
            .invoke_async(&mut self.conn())
            .await
            .map_err(PoolError::from)?;
        add_reply(&reply, max_live, "add_search")
    }

    async fn end_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        outcome: &EndOutcome,
    ) -> Result<EndResult, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        let reply: Vec<String> = self
            .inner
            .scripts
            .end
            .key(&keys.pool)
            .key(&keys.players)
            .key(&keys.deadlines)
            .key(&keys.pings)
            .key(&keys.reasons)
            .key(current)
            .key(next)
            .key(previous)
            .key(&keys.live)
            .key(&keys.modes)
            .arg(ticket_id)
            .arg(self.ended_json(&EndedSearch::of(outcome, wall_clock()))?)
            .arg(self.bucket_lifetime())
            .arg(&mode.mode)
            .invoke_async(&mut self.conn())
            .await?;
        match (reply.first().map(String::as_str), reply.get(1)) {
            (Some("ended"), _) => Ok(EndResult::Ended),
            (Some("not_live"), _) => Ok(EndResult::NotLive),
            (Some("matched"), Some(json)) => match parse_ended(json)?.how {
                Ended::Matched { match_id } => Ok(EndResult::Matched { match_id }),
                _ => Ok(EndResult::NotLive),
            },
            other => Err(PoolError::Corrupt(format!("end_search answered {other:?}"))),
        }
    }

    async fn touch_search(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        deadline: f64,
    ) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let live: i64 = self
            .inner
            .scripts
            .touch
            .key(&keys.pool)
            .key(&keys.deadlines)
            .arg(ticket_id)
            .arg(deadline)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(live == 1)
    }

    async fn expire_due(
        &self,
        mode: &ModeKey,
        now: f64,
        limit: usize,
    ) -> Result<Vec<String>, PoolError> {
        let limit = limit.clamp(1, MAX_CLAIM);
        let mut expired = Vec::new();
        // The index may begin with entries of searches claimed since (claims
        // leave them here); each pass drops those it reads, so keep reading
        // while a full batch came back and fewer than `limit` expired.
        for _ in 0..MAX_EXPIRE_PASSES {
            let (read, mut ended) = self.expire_batch(mode, now, limit - expired.len()).await?;
            let full = read == limit - expired.len();
            expired.append(&mut ended);
            if !full || expired.len() >= limit {
                break;
            }
        }
        Ok(expired)
    }

    async fn snapshot(&self, mode: &ModeKey) -> Result<Vec<Search>, PoolError> {
        let keys = self.keys(mode);
        let (values, pings): (Vec<String>, std::collections::HashMap<String, String>) =
            redis::pipe()
                .hvals(&keys.pool)
                .hgetall(&keys.pings)
                .query_async(&mut self.conn())
                .await?;
        let mut searches = Vec::with_capacity(values.len());
        for json in &values {
            let mut search = parse_search(json)?;
            if let Some(samples) = pings.get(search.ticket_id.as_str()) {
                search.ping_ms = parse_ping(samples)?;
            }
            searches.push(search);
        }
        Ok(searches)
    }

    async fn search_state(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<SearchState>, PoolError> {
        let keys = self.keys(mode);
        let [current, next, previous] = self.ended_keys(&keys);
        type Row = (
            Option<String>,
            Option<f64>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let (search, deadline, pings, reason, in_next, in_current, in_previous): Row =
            redis::pipe()
                .hget(&keys.pool, ticket_id)
                .zscore(&keys.deadlines, ticket_id)
                .hget(&keys.pings, ticket_id)
                .hget(&keys.reasons, ticket_id)
                .hget(next, ticket_id)
                .hget(current, ticket_id)
                .hget(previous, ticket_id)
                .query_async(&mut self.conn())
                .await?;
        // The newest bucket that has it, as the scripts read them.
        let ended = in_next.or(in_current).or(in_previous);
        if let Some(json) = search {
            let mut search = parse_search(&json)?;
            if let Some(samples) = pings {
                search.ping_ms = parse_ping(&samples)?;
            }
            return Ok(Some(SearchState::Live(LiveSearch {
                search,
                deadline: deadline.unwrap_or(f64::INFINITY),
                waiting_reason: reason,
            })));
        }
        ended
            .map(|json| parse_ended(&json).map(SearchState::Ended))
            .transpose()
    }

    async fn live_ticket_of_player(
        &self,
        mode: &ModeKey,
        player_id: &str,
    ) -> Result<Option<String>, PoolError> {
        let keys = self.keys(mode);
        Ok(self.conn().hget(&keys.players, player_id).await?)
    }

    async fn record_ping(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
        rtt_ms: f64,
    ) -> Result<Option<f64>, PoolError> {
        let keys = self.keys(mode);
        let samples: Option<String> = self
            .inner
            .scripts
            .ping
            .key(&keys.pool)
            .key(&keys.pings)
            .arg(ticket_id)
            .arg(rtt_ms.to_string())
            .invoke_async(&mut self.conn())
            .await?;
        match samples {
            Some(samples) => parse_ping(&samples),
            None => Ok(None),
        }
    }

    async fn set_waiting_reasons(
        &self,
        mode: &ModeKey,
        reasons: &[(String, String)],
    ) -> Result<(), PoolError> {
        let keys = self.keys(mode);
        // Chunks keep each script short, so it never blocks Redis for long.
        for chunk in reasons.chunks(5_000) {
            let mut call = self.inner.scripts.reasons.prepare_invoke();
            call.key(&keys.pool).key(&keys.reasons);
            for (ticket, reason) in chunk {
                call.arg(ticket).arg(reason);
            }
            let _stored: i64 = call.invoke_async(&mut self.conn()).await?;
        }
        Ok(())
    }

    async fn claim(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claim: &Claim,
    ) -> Result<ClaimOutcome, PoolError> {
        let mut outcomes = self
            .claim_many(mode, lease_token, std::slice::from_ref(claim))
            .await?;
        outcomes
            .pop()
            .ok_or_else(|| PoolError::Corrupt("claim answered nothing".into()))
    }

    async fn claim_many(
        &self,
        mode: &ModeKey,
        lease_token: u64,
        claims: &[Claim],
    ) -> Result<Vec<ClaimOutcome>, PoolError> {
        for claim in claims {
            check_claim(claim)?;
        }
        let keys = self.keys(mode);
        let mut batches: Vec<&[Claim]> = Vec::new();
        let (mut start, mut tickets) = (0, 0);
        for (i, claim) in claims.iter().enumerate() {
            if tickets > 0 && tickets + claim.ticket_ids.len() > CLAIM_BATCH_TICKETS {
                batches.push(&claims[start..i]);
                (start, tickets) = (i, 0);
            }
            tickets += claim.ticket_ids.len();
        }
        if start < claims.len() {
            batches.push(&claims[start..]);
        }
        // Every batch is sent at once: the multiplexed connection pipelines
        // them, so Redis runs one script after the other without waiting
        // for a round trip in between.
        let calls = batches
            .into_iter()
            .map(|batch| self.claim_batch(mode, &keys, lease_token, batch));
        let answers = futures::future::try_join_all(calls).await?;
        Ok(answers.into_iter().flatten().collect())
    }

    async fn acquire_lease(
        &self,
        mode: &ModeKey,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<u64>, PoolError> {
        let keys = self.keys(mode);
        Ok(self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .arg("acquire")
            .arg(owner)
            .arg(millis(ttl))
            .invoke_async(&mut self.conn())
            .await?)
    }

    async fn renew_lease(
        &self,
        mode: &ModeKey,
        token: u64,
        ttl: Duration,
    ) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let held: i64 = self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .arg("renew")
            .arg(token)
            .arg(millis(ttl))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(held == 1)
    }

    async fn release_lease(&self, mode: &ModeKey, token: u64) -> Result<bool, PoolError> {
        let keys = self.keys(mode);
        let held: i64 = self
            .inner
            .scripts
            .lease
            .key(&keys.lease)
            .key(&keys.fence)
            .arg("release")
            .arg(token)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(held == 1)
    }

    async fn read_outbox(
        &self,
        mode: &ModeKey,
        consumer: &str,
        count: usize,
        min_idle: Duration,
    ) -> Result<Vec<OutboxEntry>, PoolError> {
        let keys = self.keys(mode);
        let flat: Vec<String> = self
            .inner
            .scripts
            .outbox_read
            .key(&keys.outbox)
            .arg(OUTBOX_GROUP)
            .arg(consumer)
            .arg(count.max(1))
            .arg(millis(min_idle))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(flat
            .chunks_exact(3)
            .map(|e| OutboxEntry {
                id: e[0].clone(),
                match_id: e[1].clone(),
                record_json: e[2].clone(),
            })
            .collect())
    }

    async fn ack_outbox(&self, mode: &ModeKey, ids: &[String]) -> Result<u64, PoolError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let keys = self.keys(mode);
        let (acked, _deleted): (u64, u64) = redis::pipe()
            .atomic()
            .xack(&keys.outbox, OUTBOX_GROUP, ids)
            .xdel(&keys.outbox, ids)
            .query_async(&mut self.conn())
            .await?;
        Ok(acked)
    }

    async fn publish_status(&self, ticket_id: &str, json: &str) -> Result<(), PoolError> {
        let channel = status_channel(&self.inner.prefix, ticket_id);
        let _receivers: i64 = self.conn().publish(channel, json).await?;
        Ok(())
    }

    async fn subscribe_status(&self, ticket_id: &str) -> Result<StatusStream, PoolError> {
        let hub = self
            .inner
            .status
            .get_or_try_init(|| StatusHub::connect(&self.inner.client))
            .await?;
        hub.subscribe(status_channel(&self.inner.prefix, ticket_id))
            .await
    }

    async fn modes_with_searches(&self, project_id: &str) -> Result<Vec<String>, PoolError> {
        let mut modes: Vec<String> = self
            .conn()
            .smembers(modes_key(&self.inner.prefix, project_id))
            .await?;
        modes.sort();
        Ok(modes)
    }

    async fn count_live(&self, project_id: &str) -> Result<u64, PoolError> {
        let live: Option<i64> = self
            .conn()
            .get(live_key(&self.inner.prefix, project_id))
            .await?;
        Ok(live.unwrap_or(0).max(0) as u64)
    }
}
