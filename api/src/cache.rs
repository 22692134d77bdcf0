//! The one cache of the hot path's database reads (API keys, mode configs,
//! project quotas), over `moka`'s future cache, and its contract: a change
//! made through this instance is honoured by it at once, a change made
//! through another instance within [`CACHE_TTL`].
//!
//! - An entry answers for [`CACHE_TTL`] from the moment its load began (so
//!   a change committed while the load ran is seen within the TTL of the
//!   change, not of the answer).
//! - The handlers that write what a cache holds call
//!   [`TtlCache::invalidate_all`] once the write is committed: every entry
//!   loaded before (or while) the write is stale from then on, loads still
//!   running included. Writes are rare (keys revoked, modes edited, tiers
//!   changed); the cost is one load per entry in use, what the TTL costs
//!   every second anyway.
//! - Requests that need an entry at once (a cold or stale one under load)
//!   share one load (`try_get_with`); a failed load is shared by those
//!   waiting on it and not cached. A stale entry taken out for its reload
//!   is kept aside until the reload succeeds, so every request that waits
//!   on a failing reload (a database black hole) is answered as the one
//!   that began it: with the stale value, within the outage rules below.
//! - Stale entries stay in memory (up to [`IDLE`] unused, at most the
//!   cache's capacity) for [`TtlCache::peek`], which answers what was last
//!   loaded without a load.
//! - Through a database outage (a load answering `503
//!   SERVICE_UNAVAILABLE`), a stale entry keeps answering for up to
//!   [`OUTAGE_GRACE`] since it was last loaded, provided no write through
//!   this instance made it stale. The instance's caches share one
//!   [`Outage`]: once a load found the database out, stale entries answer
//!   without a load for a [`CACHE_TTL`], so a request pays at most one
//!   failed load, and once the database is back a change (a revocation) is
//!   honoured within the usual TTL. A reload that has not answered within
//!   [`RELOAD_WAIT`] (a database that takes connections and answers
//!   nothing) counts as the database out: a request with a stale value
//!   never waits for a black hole until its deadline.

use crate::problem::ApiError;
use foldhash::fast::RandomState;
use moka::future::Cache;
use moka::ops::compute::Op;
use moka::Equivalent;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a loaded entry is used without asking the database again,
/// counted from before its load: 1 s.
pub const CACHE_TTL: Duration = Duration::from_secs(1);

/// How long an entry nobody reads stays in memory (stale after
/// [`CACHE_TTL`], kept for [`TtlCache::peek`]): 5 minutes.
pub const IDLE: Duration = Duration::from_secs(300);

/// How long a stale entry keeps answering while its reload fails because
/// the database is out of reach, counted from its last successful load: 5
/// minutes. Past it, the look-up answers the outage (`503`).
pub const OUTAGE_GRACE: Duration = Duration::from_secs(300);

/// How long a request that holds a stale value waits for its reload before
/// it counts the database as out of reach (and answers the stale value
/// under [`OUTAGE_GRACE`]): 1 s. A request with nothing cached waits for
/// the load up to its deadline.
pub const RELOAD_WAIT: Duration = Duration::from_secs(1);

/// Whether the database was found out of reach within the last
/// [`CACHE_TTL`]: shared by an instance's caches (one per process in
/// service).
#[derive(Debug, Default)]
pub struct Outage {
    since: std::sync::Mutex<Option<Instant>>,
}

impl Outage {
    /// A load just found the database out of reach.
    fn found(&self) {
        if let Ok(mut since) = self.since.lock() {
            *since = Some(Instant::now());
        }
    }

    /// Whether a load found the database out within the last TTL.
    fn recent(&self) -> bool {
        self.since
            .lock()
            .ok()
            .and_then(|since| *since)
            .is_some_and(|at| at.elapsed() < CACHE_TTL)
    }
}

/// How many times a look-up loads again when each load it got began before
/// a write through this instance (writes racing it); the next one is not
/// cached.
const RELOADS: usize = 3;

/// What a cache holds for one key: the value, when its load began, and the
/// writes counted then.
#[derive(Debug, Clone)]
struct Loaded<V> {
    value: V,
    /// When the TTL of this entry began: its load, or the failed reload
    /// that kept it through an outage.
    fetched: Instant,
    /// When its value was last read from the database.
    loaded: Instant,
    generation: u64,
}

/// A key as callers look it up (borrowed) and as the cache stores it.
pub trait CacheKey<K>: Hash + Equivalent<K> {
    /// The key to store.
    fn to_key(&self) -> K;
}

impl<K: Hash + Eq + Clone> CacheKey<K> for K {
    fn to_key(&self) -> K {
        self.clone()
    }
}

impl CacheKey<String> for str {
    fn to_key(&self) -> String {
        self.to_owned()
    }
}

/// Values of `V` by `K`, loaded from the database on a miss, used for
/// [`CACHE_TTL`], made stale by [`TtlCache::invalidate_all`].
pub struct TtlCache<K, V> {
    entries: Cache<K, Loaded<V>, RandomState>,
    /// Stale entries taken out of `entries` for a reload, until one
    /// succeeds: what a request that finds no entry meanwhile answers
    /// through an outage.
    retired: Cache<K, Loaded<V>, RandomState>,
    /// Writes through this instance so far: an entry loaded when the count
    /// was lower is stale.
    generation: AtomicU64,
}

impl<K, V> std::fmt::Debug for TtlCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("entries", &self.entries.entry_count())
            .field("generation", &self.generation.load(Ordering::Relaxed))
            .finish()
    }
}

impl<K, V> TtlCache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// An empty cache of at most `capacity` entries (the least used go
    /// first once it is full).
    pub fn new(capacity: u64) -> Self {
        Self {
            entries: Cache::builder()
                .max_capacity(capacity)
                .time_to_idle(IDLE)
                .build_with_hasher(RandomState::default()),
            retired: Cache::builder()
                .max_capacity(capacity)
                .time_to_idle(IDLE)
                .build_with_hasher(RandomState::default()),
            generation: AtomicU64::new(0),
        }
    }

    fn fresh(&self, entry: &Loaded<V>) -> bool {
        entry.generation == self.generation.load(Ordering::SeqCst)
            && entry.fetched.elapsed() < CACHE_TTL
    }

    /// The value of `key`: the cached one while fresh, else `load`'s answer
    /// (shared with every request that needs `key` while it runs), cached.
    ///
    /// `load` is called only on a miss, and that path is boxed: database
    /// look-ups make large futures, which inline would be part of every
    /// request's future (see the size test in `routes/tickets.rs`).
    ///
    /// # Errors
    /// What `load` answers; errors are not cached.
    pub async fn get<Q, F>(
        &self,
        key: &Q,
        outage: &Outage,
        load: impl Fn() -> F + Send,
    ) -> Result<V, ApiError>
    where
        Q: CacheKey<K> + ?Sized,
        F: Future<Output = Result<V, ApiError>> + Send,
    {
        let stale = match self.entries.get(key).await {
            Some(hit) if self.fresh(&hit) => return Ok(hit.value),
            Some(hit) => Some(hit),
            // Taken out for a reload still running (or failed).
            None => self.retired.get(key).await,
        };
        if let Some(stale) = stale {
            if outage.recent() && self.keepable(&stale) {
                return Ok(stale.value);
            }
            return Box::pin(self.reload_or_keep(key.to_key(), stale, outage, load)).await;
        }
        let answer = Box::pin(self.reload(key.to_key(), load)).await;
        if matches!(&answer, Err(err) if err.status() == axum::http::StatusCode::SERVICE_UNAVAILABLE)
        {
            outage.found();
        }
        answer
    }

    /// Whether a stale entry may answer through an outage: no write through
    /// this instance since its load, and loaded within [`OUTAGE_GRACE`].
    fn keepable(&self, entry: &Loaded<V>) -> bool {
        entry.generation == self.generation.load(Ordering::SeqCst)
            && entry.loaded.elapsed() < OUTAGE_GRACE
    }

    /// Reloads a stale entry; when the database is out of reach, answers
    /// the stale value instead (see [`OUTAGE_GRACE`]) and keeps it for
    /// another [`CACHE_TTL`] before asking again.
    async fn reload_or_keep<F>(
        &self,
        key: K,
        stale: Loaded<V>,
        outage: &Outage,
        load: impl Fn() -> F + Send,
    ) -> Result<V, ApiError>
    where
        F: Future<Output = Result<V, ApiError>> + Send,
    {
        let reloaded = tokio::time::timeout(RELOAD_WAIT, self.reload(key.clone(), load))
            .await
            .unwrap_or_else(|_| Err(ApiError::unavailable("the database did not answer in time")));
        match reloaded {
            Err(err) if err.status() == axum::http::StatusCode::SERVICE_UNAVAILABLE => {
                outage.found();
                if !self.keepable(&stale) {
                    return Err(err);
                }
                let value = stale.value.clone();
                let kept = Loaded {
                    fetched: Instant::now(),
                    ..stale
                };
                // Unless another request loaded it meanwhile.
                self.entries.entry(key).or_insert(kept).await;
                Ok(value)
            }
            answer => answer,
        }
    }

    /// Takes a stale entry of `key` out (unless another request replaced it
    /// already), then loads it once for every request that needs it now.
    async fn reload<F>(&self, key: K, load: impl Fn() -> F + Send) -> Result<V, ApiError>
    where
        F: Future<Output = Result<V, ApiError>> + Send,
    {
        for _ in 0..RELOADS {
            self.entries
                .entry(key.clone())
                .and_compute_with(|held| {
                    let stale = held
                        .filter(|entry| !self.fresh(entry.value()))
                        .map(|entry| entry.into_value());
                    let key = key.clone();
                    async move {
                        match stale {
                            // Set aside before it leaves `entries`, so a
                            // request never finds it in neither.
                            Some(stale) => {
                                self.retired.insert(key, stale).await;
                                Op::Remove
                            }
                            None => Op::Nop,
                        }
                    }
                })
                .await;
            let loaded = self
                .entries
                .try_get_with(key.clone(), async {
                    // Taken when the load begins: a write counted after
                    // this makes the answer stale.
                    let generation = self.generation.load(Ordering::SeqCst);
                    let fetched = Instant::now();
                    load().await.map(|value| Loaded {
                        value,
                        fetched,
                        loaded: fetched,
                        generation,
                    })
                })
                .await
                .map_err(Arc::unwrap_or_clone)?;
            // A load this request joined may have begun before a write made
            // through this instance (the write's answer already sent): its
            // answer may predate the write.
            if loaded.generation == self.generation.load(Ordering::SeqCst) {
                // Newer than anything set aside.
                self.retired.invalidate(&key).await;
                return Ok(loaded.value);
            }
        }
        load().await
    }

    /// What `key` held when last loaded, however long ago, if it is still
    /// in memory; never loads.
    pub async fn peek<Q: CacheKey<K> + ?Sized>(&self, key: &Q) -> Option<V> {
        match self.entries.get(key).await {
            Some(entry) => Some(entry.value),
            None => self.retired.get(key).await.map(|entry| entry.value),
        }
    }

    /// Stores what a write through this instance just committed for `key`
    /// (e.g. "no such key" for a key revoked here), fresh for a TTL, so it
    /// is answered without a load. Call after [`TtlCache::invalidate_all`]
    /// when the write also changes other entries.
    pub async fn put(&self, key: K, value: V) {
        let now = Instant::now();
        let loaded = Loaded {
            value,
            fetched: now,
            loaded: now,
            generation: self.generation.load(Ordering::SeqCst),
        };
        self.retired.invalidate(&key).await;
        self.entries.insert(key, loaded).await;
    }

    /// Makes every entry loaded so far stale, loads still running included:
    /// called by a handler once it committed a write of what the cache
    /// holds.
    pub fn invalidate_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests;
