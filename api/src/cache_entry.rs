//! One entry of the hot path's database caches (API keys, mode configs,
//! project quotas), refreshed ahead of its expiry by one request at a time.
//!
//! An entry answers for `ttl` from the moment its query started (the bound
//! the issue sets: a change made on another instance is honoured within a
//! second). From half of `ttl` on, the first request to read it gets
//! [`Lookup::Refresh`]: it queries again while every other request keeps
//! using the entry. A busy key or mode so never expires under load, and
//! never sends a burst of identical queries: when entries simply expired,
//! every request in flight at that instant (64 in the ticket benchmark)
//! missed at once and each ran the look-up's queries, about 250 database
//! transactions a second for one key and one mode, which cost the ticket
//! route 7 % of its rate. An entry that did expire (a key idle for a while,
//! then a burst) is looked up once for all the requests that want it at
//! that moment ([`shared`], with `async_singleflight`).

use std::borrow::Borrow;
use std::convert::Infallible;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_singleflight::Group;

use crate::problem::ApiError;
use axum::http::StatusCode;

/// What a cache holds for one key, with when its query started.
#[derive(Debug, Clone)]
pub struct CacheEntry<V> {
    value: V,
    fetched: Instant,
    refreshing: bool,
}

/// The answer of [`CacheEntry::lookup`].
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup<V> {
    /// Fresh: use it.
    Hit(V),
    /// Still valid, and this caller should query again and store the
    /// answer (no other caller is asked to until the entry expires). If the
    /// query fails, the value may still be used while [`Stale::usable`].
    Refresh(Stale<V>),
    /// Expired (or absent): query.
    Miss,
}

impl<V> Lookup<V> {
    /// The same answer with `f` applied to its value.
    pub fn map<W>(self, f: impl FnOnce(V) -> W) -> Lookup<W> {
        match self {
            Lookup::Hit(value) => Lookup::Hit(f(value)),
            Lookup::Refresh(Stale { value, valid_until }) => Lookup::Refresh(Stale {
                value: f(value),
                valid_until,
            }),
            Lookup::Miss => Lookup::Miss,
        }
    }
}

/// The value of an entry being refreshed, and until when it may stand in
/// for a refresh that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale<V> {
    value: V,
    valid_until: Instant,
}

impl<V> Stale<V> {
    /// The value, if it is still valid at `now` (a refresh that failed only
    /// after a long wait, for a database connection say, must not serve an
    /// entry older than the TTL).
    pub fn usable(self, now: Instant) -> Option<V> {
        (now < self.valid_until).then_some(self.value)
    }

    /// What a caller gets when its refresh of the `what` entry failed with
    /// `error`: the value while it is still valid (the failure is logged),
    /// else the error.
    ///
    /// # Errors
    /// `error`, once the entry is no longer valid.
    pub fn instead_of(self, error: ApiError, what: &str) -> Result<V, ApiError> {
        match self.usable(Instant::now()) {
            Some(value) => {
                tracing::warn!(error = ?error, what, "cache refresh failed; the entry is still valid");
                Ok(value)
            }
            None => Err(error),
        }
    }
}

impl<V: Clone> CacheEntry<V> {
    /// `value`, as read by a query that started at `fetched`.
    pub fn new(value: V, fetched: Instant) -> Self {
        Self {
            value,
            fetched,
            refreshing: false,
        }
    }

    /// The entry for a caller at `now`, valid for `ttl` after its fetch.
    pub fn lookup(&mut self, ttl: Duration, now: Instant) -> Lookup<V> {
        let age = now.saturating_duration_since(self.fetched);
        if age >= ttl {
            Lookup::Miss
        } else if age >= ttl / 2 && !self.refreshing {
            self.refreshing = true;
            Lookup::Refresh(Stale {
                value: self.value.clone(),
                valid_until: self.fetched + ttl,
            })
        } else {
            Lookup::Hit(self.value.clone())
        }
    }

    /// Whether the entry is still valid at `now`.
    pub fn is_valid(&self, ttl: Duration, now: Instant) -> bool {
        now.saturating_duration_since(self.fetched) < ttl
    }

    /// The value, however old.
    pub fn value(&self) -> &V {
        &self.value
    }
}

/// Counts a cache's evictions, so that a look-up that started before an
/// eviction does not store its answer after it: its query may have read the
/// database before the change that caused the eviction was committed, and
/// the instance that made the change must honour it at once.
///
/// Take [`Evictions::current`] before the query, and store the answer only
/// if [`Evictions::unchanged_since`] holds, checked under the lock of the
/// map it goes into; an eviction calls [`Evictions::record`] before it
/// removes entries.
#[derive(Debug, Default)]
pub struct Evictions(AtomicU64);

impl Evictions {
    /// The count now.
    pub fn current(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    /// Counts one eviction.
    pub fn record(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether no eviction happened since the count was `seen`.
    pub fn unchanged_since(&self, seen: u64) -> bool {
        self.current() == seen
    }
}

/// Look-ups in flight by key: requests that miss on the same key at once
/// (a burst on a key idle for a TTL) share one look-up and its answer,
/// error included (a `404` is a `404` for every one of them). Callers put
/// the cache's [`Evictions::current`] in the key, so a request that comes
/// after an eviction never joins a look-up that began before it.
pub type Flights<K, T> = Group<K, Result<T, ApiError>, Infallible>;

/// `load`'s answer, shared with every request that asks for `key` while it
/// runs.
///
/// When a look-up's first caller goes away (its client disconnected), a
/// waiting one takes it over, and `async_singleflight` then leaves the
/// finished look-up in its map until the same key is asked for again;
/// every shared look-up therefore ends by dropping finished ones
/// (`purge_stale`), so made-up keys cannot grow the map.
pub async fn shared<K, Q, T>(
    flights: &Flights<K, T>,
    key: &Q,
    load: impl Future<Output = Result<T, ApiError>> + Send,
) -> Result<T, ApiError>
where
    K: Hash + Eq + Borrow<Q>,
    Q: Hash + Eq + ?Sized + Send + Sync + ToOwned<Owned = K>,
    T: Clone,
{
    let answer = flights.work(key, async { Ok(load.await) }).await;
    flights.purge_stale().await;
    match answer {
        Ok(answer) => answer,
        // Not reached: the shared future never fails (its answer is the
        // Result), and a dropped leader's place is taken by a waiter.
        Err(_) => Err(ApiError::internal(
            &"a shared look-up ended without an answer",
        )),
    }
}

/// The answer for a cache entry as [`CacheEntry::lookup`] found it: a hit
/// as is; a miss through `load`, shared with every request that misses on
/// `flight_key` at the same time; a refresh through `load`, falling back to
/// the entry while it is still valid if `load` fails. A `404` from a
/// refresh (the project gone) is never hidden by the entry: `gone` runs,
/// to drop it, and the `404` is the answer.
///
/// `load` and `flight_key` are called only when needed, and the look-up's
/// future is boxed: database queries make it large, and inline it would be
/// part of every request's future, which is moved whole at least once per
/// request (see the size test in `routes/tickets.rs`).
///
/// # Errors
/// What `load` answers, as above.
pub async fn resolve<K, V, F>(
    lookup: Lookup<V>,
    flights: &Flights<K, V>,
    flight_key: impl FnOnce() -> K,
    load: impl FnOnce() -> F,
    what: &str,
    gone: impl FnOnce(),
) -> Result<V, ApiError>
where
    K: Hash + Eq + Clone + Send + Sync,
    V: Clone,
    F: Future<Output = Result<V, ApiError>> + Send,
{
    match lookup {
        Lookup::Hit(value) => Ok(value),
        Lookup::Miss => Box::pin(shared(flights, &flight_key(), load())).await,
        Lookup::Refresh(stale) => match Box::pin(load()).await {
            Err(e) if e.status() == StatusCode::NOT_FOUND => {
                gone();
                Err(e)
            }
            Err(e) => stale.instead_of(e, what),
            answer => answer,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(1);

    #[test]
    fn fresh_then_one_refresh_then_miss() {
        let t0 = Instant::now();
        let mut entry = CacheEntry::new(7, t0);
        assert_eq!(entry.lookup(TTL, t0), Lookup::Hit(7));
        assert_eq!(entry.lookup(TTL, t0 + TTL / 4), Lookup::Hit(7));
        // Past half its life: the first reader refreshes, the others hit.
        let Lookup::Refresh(stale) = entry.lookup(TTL, t0 + TTL / 2) else {
            panic!("no refresh");
        };
        // Its value stands in for a failed refresh only within the TTL.
        assert_eq!(stale.clone().usable(t0 + TTL * 3 / 4), Some(7));
        assert_eq!(stale.usable(t0 + TTL), None);
        assert_eq!(entry.lookup(TTL, t0 + TTL / 2), Lookup::Hit(7));
        assert_eq!(entry.lookup(TTL, t0 + TTL * 3 / 4), Lookup::Hit(7));
        assert!(entry.is_valid(TTL, t0 + TTL * 3 / 4));
        // A refresh that never stored anything does not extend the entry.
        assert_eq!(entry.lookup(TTL, t0 + TTL), Lookup::Miss);
        assert!(!entry.is_valid(TTL, t0 + TTL));
    }

    #[test]
    fn a_clock_before_the_fetch_is_a_hit() {
        let t0 = Instant::now();
        let mut entry = CacheEntry::new("v", t0 + TTL);
        assert_eq!(entry.lookup(TTL, t0), Lookup::Hit("v"));
    }

    #[test]
    fn an_eviction_voids_the_look_ups_started_before_it() {
        let evictions = Evictions::default();
        let before = evictions.current();
        assert!(evictions.unchanged_since(before));
        evictions.record();
        assert!(!evictions.unchanged_since(before));
        assert!(evictions.unchanged_since(evictions.current()));
    }

    #[tokio::test]
    async fn requests_that_miss_together_share_one_look_up() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let flights: Flights<String, u32> = Flights::default();
        let look_ups = AtomicUsize::new(0);
        let load = || async {
            look_ups.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(7)
        };
        let answers =
            futures::future::join_all((0..20).map(|_| shared(&flights, "k", load()))).await;
        assert_eq!(look_ups.load(Ordering::SeqCst), 1);
        assert!(answers.iter().all(|a| matches!(a, Ok(7))));
        // Once done, the next miss looks up again.
        assert!(matches!(shared(&flights, "k", load()).await, Ok(7)));
        assert_eq!(look_ups.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn every_waiter_gets_the_shared_error() {
        let flights: Flights<String, u32> = Flights::default();
        let load = || async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(ApiError::not_found("no such project"))
        };
        let answers =
            futures::future::join_all((0..10).map(|_| shared(&flights, "k", load()))).await;
        // A 404 for all of them, not a 500 for those who waited.
        for answer in answers {
            assert_eq!(
                answer.map_err(|e| e.status()),
                Err(axum::http::StatusCode::NOT_FOUND)
            );
        }
    }
}
