//! The cache's contract, on a cache of numbers with counted loads.

use super::*;
use std::sync::atomic::{AtomicU32, AtomicUsize};

fn counting<'a>(
    loads: &'a AtomicUsize,
    answer: u32,
) -> impl Fn() -> std::pin::Pin<Box<dyn Future<Output = Result<u32, ApiError>> + Send + 'a>> + Send + 'a
{
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
    let answers = futures::future::join_all((0..20).map(|_| cache.get("k", &outage, &load))).await;
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
    let answers = futures::future::join_all((0..10).map(|_| cache.get("k", &outage, load))).await;
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

/// A reload that hangs on a database black hole, then fails: every
/// request that needs the entry meanwhile gets the stale value, also
/// those arriving after the reload took the stale entry out (they
/// found no entry and waited on the failing load). Before: those got
/// the `503`.
#[tokio::test]
async fn requests_waiting_on_a_failing_reload_get_the_stale_value() {
    let cache: Arc<TtlCache<String, u32>> = Arc::new(TtlCache::new(100));
    let outage = Arc::new(Outage::default());
    let loads = Arc::new(AtomicUsize::new(0));
    assert!(matches!(
        cache.get("k", &outage, counting(&loads, 1)).await,
        Ok(1)
    ));
    tokio::time::sleep(CACHE_TTL).await;
    let black_hole = {
        let loads = loads.clone();
        move || {
            let loads = loads.clone();
            async move {
                loads.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                Err::<u32, _>(ApiError::unavailable("the database is unreachable"))
            }
        }
    };
    let mut waiting = Vec::new();
    for _ in 0..10 {
        let (cache, outage, load) = (cache.clone(), outage.clone(), black_hole.clone());
        waiting.push(tokio::spawn(
            async move { cache.get("k", &outage, load).await },
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for answer in waiting {
        let answer = answer.await.unwrap().map_err(|e| e.status());
        assert_eq!(answer, Ok(1));
    }
    assert_eq!(loads.load(Ordering::SeqCst), 2, "one shared reload");
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

/// A reload that never answers (a database black hole: connections taken,
/// nothing answered): a request holding a stale value answers it after
/// [`RELOAD_WAIT`], as for a failed reload, instead of waiting for its
/// deadline; then the instance counts an outage and the next requests
/// answer at once.
#[tokio::test]
async fn a_reload_that_never_answers_counts_as_an_outage() {
    let cache: TtlCache<String, u32> = TtlCache::new(100);
    let outage = Outage::default();
    let loads = AtomicUsize::new(0);
    assert!(matches!(
        cache.get("k", &outage, counting(&loads, 1)).await,
        Ok(1)
    ));
    tokio::time::sleep(CACHE_TTL).await;
    let black_hole = || async {
        std::future::pending::<()>().await;
        Ok(2)
    };
    let answer = tokio::time::timeout(
        RELOAD_WAIT * 3,
        futures::future::join_all((0..5).map(|_| cache.get("k", &outage, black_hole))),
    )
    .await
    .expect("answered before the request deadline would be");
    for got in answer {
        assert!(matches!(got, Ok(1)), "{got:?}");
    }
    assert!(matches!(cache.get("k", &outage, black_hole).await, Ok(1)));
}
