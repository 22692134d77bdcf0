//! Ticket generations on one Redis node, batched: while one batch is in
//! flight the next gathers, and each batch is one pipelined round trip for
//! all its tickets (as the pool's project lanes do, `pool::redis::lane`).
//!
//! A generation alone is four commands (see `redis.rs`); in a batch each
//! ticket costs its record's `SET` (and its party's three commands), and the rest is
//! shared: one `HMGET` of the players searching per mode, one `ZADD` of
//! the new pending tickets per project and one `ZCOUNT` after it. Each
//! ticket is answered once the whole batch was written, so a ticket is in
//! Redis before its generation answers, as one at a time.
//!
//! The count a ticket gets is the one it would have read had the batch's
//! tickets been written one after the other in the order they queued: the
//! project's count after the batch, less the batch's later tickets
//! (counted from the earliest `now` of the batch, so never fewer than its
//! own `now` would count: the count still never lets the limit be passed).
//!
//! A cluster does not batch (`redis.rs`): a pipeline over many slots is
//! sent there one command at a time, and a batch would wait for all.

use std::sync::{Arc, Mutex, PoisonError};

use redis::Value;
use tokio::sync::oneshot;

use crate::pool::RedisPoolStore;

/// Tickets one batch takes at most; the rest go in the next.
const MAX_BATCH: usize = 512;

/// What a ticket's generation read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Written {
    /// The player's live ticket in the mode, if searching.
    pub live: Option<String>,
    /// The project's pending tickets, this one included.
    pub count: u64,
}

/// One ticket's writes: its record, its party's list, its place among its
/// project's pending tickets, and the player check.
pub(super) struct TicketWrite {
    /// `P:ticket:…` and the record's JSON (UTF-8).
    pub record_key: String,
    pub record: Vec<u8>,
    /// Seconds the record (and the party's list) is kept.
    pub keep: u64,
    /// The party's members key and the members the ticket names, if any.
    pub party: Option<(String, Vec<String>)>,
    /// The mode's players hash and the ticket's player.
    pub players_key: String,
    pub player_id: String,
    /// The project's pending set, the ticket's id and expiry there.
    pub pending_key: String,
    pub ticket_id: String,
    pub expires_at: f64,
    /// The generation's time (Unix seconds).
    pub now: f64,
    /// Whether the pending set is due its upkeep (`redis.rs`).
    pub upkeep: bool,
}

/// One ticket to write, waiting for its batch.
pub(super) struct Generation {
    /// What to write.
    pub write: TicketWrite,
    /// Told what was read once the batch ran.
    pub answer: oneshot::Sender<Result<Written, redis::RedisError>>,
}

impl std::ops::Deref for Generation {
    type Target = TicketWrite;

    fn deref(&self) -> &TicketWrite {
        &self.write
    }
}

#[derive(Default)]
struct Queue {
    /// Whether a task is sending batches.
    flushing: bool,
    waiting: Vec<Generation>,
}

/// The generations of one ticket store waiting for their batch. Cheap to
/// clone: clones share the queue.
#[derive(Clone, Default)]
pub(super) struct Batches(Arc<Mutex<Queue>>);

impl Batches {
    fn with<T>(&self, f: impl FnOnce(&mut Queue) -> T) -> T {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut queue)
    }

    /// Queues `generation`, starting a task to send the batches on
    /// `pool`'s connection if none is.
    pub(super) fn push(&self, pool: &RedisPoolStore, generation: Generation) {
        let start = self.with(|queue| {
            queue.waiting.push(generation);
            !std::mem::replace(&mut queue.flushing, true)
        });
        if start {
            let (batches, pool) = (self.clone(), pool.clone());
            tokio::spawn(async move { batches.flush(&pool).await });
        }
    }

    /// Sends batches until the queue is empty.
    async fn flush(&self, pool: &RedisPoolStore) {
        // Leaves the queue idle however the task ends (also dropped with
        // its runtime): generations queued then fail rather than wait.
        struct Idle<'a>(&'a Batches, bool);
        impl Drop for Idle<'_> {
            fn drop(&mut self) {
                if !self.1 {
                    self.0.with(|queue| {
                        queue.flushing = false;
                        queue.waiting.clear();
                    });
                }
            }
        }
        let mut idle = Idle(self, false);
        loop {
            // Taking the batch and leaving the queue idle are one step, so
            // a generation queued meanwhile either goes in this batch or
            // finds the queue idle and starts a task.
            let batch = self.with(|queue| {
                if queue.waiting.is_empty() {
                    queue.flushing = false;
                    return None;
                }
                let take = queue.waiting.len().min(MAX_BATCH);
                Some(queue.waiting.drain(..take).collect::<Vec<_>>())
            });
            let Some(batch) = batch else {
                idle.1 = true;
                return;
            };
            send(pool, batch).await;
        }
    }
}

/// Adds a ticket's party `members` to the party's set `key`, which is kept
/// at least `keep` seconds from now: the first `EXPIRE` gives a new set its
/// expiry, the second only ever lengthens one (a set without an expiry
/// counts as endless to `GT`).
pub(super) fn add_party(pipe: &mut redis::Pipeline, key: &str, members: &[String], keep: u64) {
    pipe.sadd(key, members)
        .ignore()
        .cmd("EXPIRE")
        .arg(key)
        .arg(keep)
        .arg("NX")
        .ignore()
        .cmd("EXPIRE")
        .arg(key)
        .arg(keep)
        .arg("GT")
        .ignore();
}

/// The batch's commands in one pipeline; every generation is answered.
async fn send(pool: &RedisPoolStore, batch: Vec<Generation>) {
    // Modes and projects, the tickets of each.
    let modes = groups(&batch, |g| &g.players_key);
    let projects = groups(&batch, |g| &g.pending_key);
    let mut pipe = redis::pipe();
    for g in &batch {
        pipe.set_ex(&g.record_key, &g.record, g.keep).ignore();
        if let Some((key, members)) = &g.party {
            add_party(&mut pipe, key, members, g.keep);
        }
    }
    for (key, tickets) in &modes {
        let mut hmget = redis::cmd("HMGET");
        hmget.arg(*key);
        for &i in tickets {
            hmget.arg(&batch[i].player_id);
        }
        pipe.add_command(hmget);
    }
    let mut since = Vec::with_capacity(projects.len());
    for (key, tickets) in &projects {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(*key);
        for &i in tickets {
            zadd.arg(batch[i].expires_at).arg(&batch[i].ticket_id);
        }
        pipe.add_command(zadd).ignore();
        let now = tickets
            .iter()
            .map(|&i| batch[i].now)
            .fold(f64::INFINITY, f64::min);
        since.push(now);
        pipe.zcount(*key, format!("({now}"), "+inf");
        if tickets.iter().any(|&i| batch[i].upkeep) {
            pipe.zrembyscore(*key, "-inf", now)
                .ignore()
                .expire(*key, super::redis::PENDING_SET_TTL_SECONDS)
                .ignore();
        }
    }
    let answers = match pipe.query_async::<Vec<Value>>(&mut pool.conn()).await {
        Ok(values) => read(&batch, &modes, &projects, &since, values),
        Err(err) => Err(err),
    };
    match answers {
        Ok(written) => {
            for (g, written) in batch.into_iter().zip(written) {
                let _gone = g.answer.send(Ok(written));
            }
        }
        Err(err) => {
            for g in batch {
                let _gone = g.answer.send(Err(err.clone()));
            }
        }
    }
}

/// The batch's tickets by `key` (a mode's or a project's): each key with
/// its tickets in the order they queued, the keys in their sort order. A
/// stable sort of the tickets' places rather than a map from key to
/// group: no hash of every ticket's keys (SipHash showed in the ticket
/// route's profile), and no worse for a batch over many projects.
fn groups<'a>(
    batch: &'a [Generation],
    key: impl Fn(&'a Generation) -> &'a str,
) -> Vec<(&'a str, Vec<usize>)> {
    let mut order: Vec<usize> = (0..batch.len()).collect();
    order.sort_by_key(|&i| key(&batch[i]));
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for i in order {
        let k = key(&batch[i]);
        match groups.last_mut() {
            Some((last, tickets)) if *last == k => tickets.push(i),
            _ => groups.push((k, vec![i])),
        }
    }
    groups
}

/// Each generation's answer from the pipeline's values: one list of live
/// tickets per mode, then one count per project.
fn read(
    batch: &[Generation],
    modes: &[(&str, Vec<usize>)],
    projects: &[(&str, Vec<usize>)],
    since: &[f64],
    values: Vec<Value>,
) -> Result<Vec<Written>, redis::RedisError> {
    let mut written: Vec<Written> = vec![
        Written {
            live: None,
            count: 0,
        };
        batch.len()
    ];
    let mut values = values.into_iter();
    let mut next = || {
        values.next().ok_or_else(|| {
            redis::RedisError::from((
                redis::ErrorKind::Client,
                "the tickets' batch answered too few values",
            ))
        })
    };
    for (_, tickets) in modes {
        let live: Vec<Option<String>> = redis::from_redis_value(next()?)?;
        for (&i, live) in tickets.iter().zip(live) {
            written[i].live = live;
        }
    }
    for ((_, tickets), &now) in projects.iter().zip(since) {
        let count: u64 = redis::from_redis_value(next()?)?;
        // The project's later tickets in this batch, counted from `now`.
        let mut later = 0u64;
        for &i in tickets.iter().rev() {
            written[i].count = count.saturating_sub(later);
            if batch[i].expires_at > now {
                later += 1;
            }
        }
    }
    Ok(written)
}
