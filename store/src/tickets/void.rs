//! Tickets voided after a failed generation. A generation whose Redis
//! answer never came (a timeout, a cut connection) may still have been
//! written: its token was never given out, so nobody can search with it,
//! yet it would count among its project's pending tickets (against the
//! tier's `maxPendingTickets`) until it expired. Such a ticket's record and
//! its place in the pending set are deleted here, in the background, as
//! soon as Redis answers again, and once more a little later, in case the
//! lost write was still held somewhere on its way and lands after the first
//! delete (docs/config-as-code.md, "Idempotent requests").
//!
//! Nothing else of the ticket needs undoing: its party's member list only
//! ever widens which searches a party's end reaches, and the ticket never
//! had a search.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

use crate::pool::RedisPoolStore;

/// Time between two rounds of deletes while some are due or failing.
const ROUND: Duration = Duration::from_secs(1);

/// How long after its first delete a ticket is deleted again.
const AGAIN_AFTER: Duration = Duration::from_secs(30);

/// Tickets one round deletes at most (one pipelined round trip); the rest
/// wait for the next round.
const MAX_ROUND: usize = 1_000;

/// Tickets waiting to be voided at most; beyond it a ticket is left to
/// lapse at its expiry, as it would have without this.
const MAX_WAITING: usize = 100_000;

/// One ticket to void.
#[derive(Debug, Clone)]
pub(super) struct Void {
    /// `P:ticket:…`, the record.
    pub record_key: String,
    /// The project's pending set and the ticket's id in it.
    pub pending_key: String,
    pub ticket_id: String,
    /// When the ticket expires (Unix seconds): past it, nothing is left to
    /// void that Redis does not drop by itself.
    pub expires_at: f64,
}

#[derive(Debug)]
struct Waiting {
    void: Void,
    /// When the next delete is due.
    due: Instant,
    /// Whether this is the last delete (the first one succeeded).
    last: bool,
}

#[derive(Debug, Default)]
struct Queue {
    /// Whether a task is voiding.
    running: bool,
    waiting: Vec<Waiting>,
}

/// The tickets of one ticket store waiting to be voided. Cheap to clone:
/// clones share the queue.
#[derive(Debug, Clone, Default)]
pub(super) struct Voids(Arc<Mutex<Queue>>);

impl Voids {
    fn with<T>(&self, f: impl FnOnce(&mut Queue) -> T) -> T {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut queue)
    }

    /// Queues `void` for deleting at once, starting a task on `pool`'s
    /// connection if none is running.
    pub(super) fn push(&self, pool: &RedisPoolStore, void: Void) {
        let start = self.with(|queue| {
            if queue.waiting.len() >= MAX_WAITING {
                tracing::warn!(
                    ticket_id = %void.ticket_id,
                    "too many tickets waiting to be voided: this one lapses at its expiry"
                );
                return false;
            }
            queue.waiting.push(Waiting {
                void,
                due: Instant::now(),
                last: false,
            });
            !std::mem::replace(&mut queue.running, true)
        });
        if start {
            let (voids, pool) = (self.clone(), pool.clone());
            tokio::spawn(async move { voids.run(&pool).await });
        }
    }

    /// How many tickets wait to be voided.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        self.with(|queue| queue.waiting.len())
    }

    /// Deletes the due tickets round after round until none waits.
    async fn run(&self, pool: &RedisPoolStore) {
        // Leaves the queue idle however the task ends (also dropped with
        // its runtime), so that the next push starts a task again.
        struct Idle<'a>(&'a Voids);
        impl Drop for Idle<'_> {
            fn drop(&mut self) {
                self.0.with(|queue| queue.running = false);
            }
        }
        let _idle = Idle(self);
        loop {
            let now = Instant::now();
            let unix_now = crate::pool::wall_clock();
            let due = self.with(|queue| {
                queue.waiting.retain(|w| w.void.expires_at > unix_now);
                if queue.waiting.is_empty() {
                    queue.running = false;
                    return None;
                }
                let (mut due, mut later): (Vec<_>, Vec<_>) =
                    queue.waiting.drain(..).partition(|w| w.due <= now);
                if due.len() > MAX_ROUND {
                    later.extend(due.split_off(MAX_ROUND));
                }
                queue.waiting = later;
                Some(due)
            });
            let Some(due) = due else {
                return;
            };
            if !due.is_empty() {
                let deleted = delete(pool, &due).await;
                let next = Instant::now();
                self.with(|queue| {
                    for mut w in due {
                        match (&deleted, w.last) {
                            (Ok(()), true) => continue,
                            (Ok(()), false) => (w.due, w.last) = (next + AGAIN_AFTER, true),
                            (Err(_), _) => w.due = next + ROUND,
                        }
                        queue.waiting.push(w);
                    }
                });
                if let Err(e) = deleted {
                    tracing::debug!(error = %e, "voiding tickets failed; trying again");
                }
            }
            tokio::time::sleep(ROUND).await;
        }
    }
}

/// Deletes the records of `due` and takes them out of their pending sets,
/// in one pipelined round trip.
async fn delete(pool: &RedisPoolStore, due: &[Waiting]) -> Result<(), redis::RedisError> {
    let mut pipe = redis::pipe();
    for w in due {
        pipe.del(&w.void.record_key)
            .ignore()
            .zrem(&w.void.pending_key, &w.void.ticket_id)
            .ignore();
    }
    pipe.query_async(&mut pool.conn()).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::RedisPoolConfig;
    use crate::tickets::tests::{redis_url, ticket, RedisKeys};
    use crate::tickets::{RedisTicketStore, TicketStore};

    #[tokio::test]
    async fn a_voided_ticket_leaves_its_record_and_the_pending_count() {
        let prefix = format!("mpt_{}", ulid::Ulid::new());
        let _keys = RedisKeys(prefix.clone());
        let mut config = RedisPoolConfig::new(redis_url());
        config.prefix = prefix.clone();
        let pool = crate::pool::RedisPoolStore::connect(config).await.unwrap();
        let tickets = RedisTicketStore::new(pool.clone());
        let now = crate::pool::wall_clock();
        let mut kept = ticket("tkt_kept", "p1");
        let mut lost = ticket("tkt_lost", "p2");
        kept.expires_at = now + 600.0;
        lost.expires_at = now + 600.0;
        tickets.create(&kept, now).await.unwrap();
        tickets.create(&lost, now).await.unwrap();
        assert_eq!(tickets.pending("prj_t", now).await.unwrap(), 2);

        let voids = Voids::default();
        let void = |id: &str, expires_at: f64| Void {
            record_key: crate::pool::redis::keys::ticket_key(&prefix, "prj_t", id),
            pending_key: crate::pool::redis::keys::pending_key(&prefix, "prj_t"),
            ticket_id: id.to_owned(),
            expires_at,
        };
        voids.push(&pool, void("tkt_lost", lost.expires_at));
        // One that expired already is dropped without a delete.
        voids.push(&pool, void("tkt_kept", now - 1.0));
        let started = std::time::Instant::now();
        while tickets.get("prj_t", "tkt_lost").await.unwrap().is_some() {
            assert!(started.elapsed() < Duration::from_secs(5), "never voided");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(tickets.pending("prj_t", now).await.unwrap(), 1);
        assert!(tickets.get("prj_t", "tkt_kept").await.unwrap().is_some());
        // The lost ticket waits for its second delete, the expired one not.
        assert_eq!(voids.waiting(), 1);
    }
}
