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
//!   waiting on it and not cached.
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
//!   honoured within the usual TTL.

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
        if let Some(hit) = self.entries.get(key).await {
            if self.fresh(&hit) || (outage.recent() && self.keepable(&hit)) {
                return Ok(hit.value);
            }
            return Box::pin(self.reload_or_keep(key.to_key(), hit, outage, load)).await;
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
        match self.reload(key.clone(), load).await {
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
                    let stale = held.is_some_and(|entry| !self.fresh(entry.value()));
                    async move {
                        if stale {
                            Op::Remove
                        } else {
                            Op::Nop
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
                return Ok(loaded.value);
            }
        }
        load().await
    }

    /// What `key` held when last loaded, however long ago, if it is still
    /// in memory; never loads.
    pub async fn peek<Q: CacheKey<K> + ?Sized>(&self, key: &Q) -> Option<V> {
        self.entries.get(key).await.map(|entry| entry.value)
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
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, AtomicUsize};

    fn counting<'a>(
        loads: &'a AtomicUsize,
        answer: u32,
    ) -> impl Fn() -> std::pin::Pin<Box<dyn Future<Output = Result<u32, ApiError>> + Send + 'a>>
           + Send
           + 'a {
        move || {
            Box::pin(async move {
                loads.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(answer)
            })
        }
    }

    #[tokio::test]
    async fn requests_that_miss_together_share_one_load() {
        let cache: TtlCache<String, u32> = TtlCache::new(100);
        let outage = Outage::default();
        let loads = AtomicUsize::new(0);
        let load = counting(&loads, 7);
        let answers =
            futures::future::join_all((0..20).map(|_| cache.get("k", &outage, &load))).await;
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert!(answers.iter().all(|a| matches!(a, Ok(7))));
        // Cached: no load.
        assert!(matches!(
            cache.get("k", &Outage::default(), &load).await,
            Ok(7)
        ));
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn every_waiter_gets_the_shared_error_and_it_is_not_cached() {
        let cache: TtlCache<String, u32> = TtlCache::new(100);
        let outage = Outage::default();
        let loads = AtomicUsize::new(0);
        let load = || async {
            loads.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(ApiError::not_found("no such project"))
        };
        let answers =
            futures::future::join_all((0..10).map(|_| cache.get("k", &outage, load))).await;
        // A 404 for all of them, not a 500 for those who waited.
        for answer in answers {
            assert_eq!(
                answer.map_err(|e| e.status()),
                Err(axum::http::StatusCode::NOT_FOUND)
            );
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert!(cache.get("k", &Outage::default(), load).await.is_err());
        assert_eq!(loads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_write_makes_entries_stale_at_once_and_peek_keeps_them() {
        let cache: TtlCache<String, u32> = TtlCache::new(100);
        let loads = AtomicUsize::new(0);
        assert!(matches!(
            cache
                .get("k", &Outage::default(), counting(&loads, 1))
                .await,
            Ok(1)
        ));
        cache.invalidate_all();
        assert_eq!(cache.peek("k").await, Some(1));
        assert!(matches!(
            cache
                .get("k", &Outage::default(), counting(&loads, 2))
                .await,
            Ok(2)
        ));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_stale_entry_answers_while_the_database_is_out_of_reach() {
        let cache: TtlCache<String, u32> = TtlCache::new(100);
        let loads = AtomicUsize::new(0);
        let down = || async {
            loads.fetch_add(1, Ordering::SeqCst);
            Err(ApiError::unavailable("the database is unreachable"))
        };
        let outage = Outage::default();
        assert!(matches!(
            cache.get("k", &outage, counting(&loads, 1)).await,
            Ok(1)
        ));
        tokio::time::sleep(CACHE_TTL).await;
        assert!(matches!(cache.get("k", &outage, down).await, Ok(1)));
        // Kept a TTL more: no load meanwhile.
        assert!(matches!(cache.get("k", &outage, down).await, Ok(1)));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        // Another failure is not served stale.
        let refused = || async { Err(ApiError::not_found("no such key")) };
        tokio::time::sleep(CACHE_TTL).await;
        assert!(cache.get("k", &Outage::default(), refused).await.is_err());
        // A write through this instance ends the grace.
        assert!(matches!(
            cache
                .get("k", &Outage::default(), counting(&loads, 2))
                .await,
            Ok(2)
        ));
        cache.invalidate_all();
        assert!(cache.get("k", &Outage::default(), down).await.is_err());
    }

    #[tokio::test]
    async fn an_entry_expires_a_ttl_after_its_load_began() {
        let cache: TtlCache<String, u32> = TtlCache::new(100);
        let loads = AtomicUsize::new(0);
        assert!(matches!(
            cache
                .get("k", &Outage::default(), counting(&loads, 1))
                .await,
            Ok(1)
        ));
        tokio::time::sleep(CACHE_TTL - Duration::from_millis(100)).await;
        // Under a TTL since its load began (the load took 50 ms of it).
        assert!(matches!(
            cache
                .get("k", &Outage::default(), counting(&loads, 2))
                .await,
            Ok(1)
        ));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(matches!(
            cache
                .get("k", &Outage::default(), counting(&loads, 2))
                .await,
            Ok(2)
        ));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_load_begun_before_a_write_is_not_served_after_it() {
        let cache: Arc<TtlCache<String, u32>> = Arc::new(TtlCache::new(100));
        // The database: a load reads it when it begins and answers 100 ms
        // later.
        let stored = Arc::new(AtomicU32::new(1));
        let load = {
            let stored = stored.clone();
            move || {
                let read = stored.load(Ordering::SeqCst);
                async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Ok(read)
                }
            }
        };
        // A load of the old value is in flight.
        let early = {
            let (cache, load) = (cache.clone(), load.clone());
            tokio::spawn(async move { cache.get("k", &Outage::default(), load).await })
        };
        tokio::time::sleep(Duration::from_millis(30)).await;
        // The write commits and is counted: a request after it joins no
        // earlier load, and gets what was written.
        stored.store(2, Ordering::SeqCst);
        cache.invalidate_all();
        let got = cache.get("k", &Outage::default(), &load).await;
        assert!(matches!(got, Ok(2)), "{got:?}");
        assert!(early.await.unwrap().is_ok());
        let got = cache.get("k", &Outage::default(), &load).await;
        assert!(matches!(got, Ok(2)), "{got:?}");
    }
}
