//! The conformance suite: every case is written once, against
//! `Arc<dyn PoolStore>`, and run on both [`MemoryPoolStore`] and
//! [`RedisPoolStore`] (real Redis at `MATCHPLANE_TEST_REDIS_URL`, default
//! `redis://127.0.0.1:6379/9`, under a random key prefix per test, deleted
//! afterwards even when the test fails).

mod cases;
mod concurrency;

use std::sync::Arc;
use std::time::Duration;

use super::{MemoryPoolStore, ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore, Search};

pub(crate) use cases::*;
pub(crate) use concurrency::*;

/// Runs each named case (an `async fn(Arc<dyn PoolStore>)`) on both stores.
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod on_memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    super::$case(super::memory_store()).await;
                }
            )*
        }
        mod on_redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let harness = super::RedisHarness::new().await;
                    super::$case(harness.store()).await;
                }
            )*
        }
    };
}

conformance!(
    add_and_snapshot,
    one_search_per_ticket_and_player,
    quota_counts_the_whole_project,
    end_search_reports_how_it_stood,
    ping_is_the_median_of_the_last_five,
    waiting_reasons_only_for_live_searches,
    deadlines_expire_and_touch_extends,
    claim_takes_all_or_nothing,
    claim_refused_under_a_stale_fencing_token,
    claim_many_takes_each_group_on_its_own,
    claim_many_spans_several_script_runs,
    claimed_searches_never_hold_up_expiry,
    outbox_entries_of_a_dead_consumer_are_taken_over,
    status_messages_reach_every_subscriber,
    cancels_racing_claims_end_every_search_exactly_once,
    modes_with_searches_follow_the_pools,
);

fn memory_store() -> Arc<dyn PoolStore> {
    Arc::new(MemoryPoolStore::new())
}

/// A deadline nobody reaches in a test (Unix seconds).
pub(crate) const FAR: f64 = 1e12;

/// `prj_a`'s mode of that name.
pub(crate) fn mode(name: &str) -> ModeKey {
    ModeKey::new("prj_a", name)
}

/// A solo search of `player` with ticket `ticket`.
pub(crate) fn solo(ticket: &str, player: &str) -> Search {
    Search::solo(ticket, player, 1500.0, 1_764_486_133.123_456)
}

/// A real Redis under a random prefix, cleaned up on drop.
pub(crate) struct RedisHarness {
    url: String,
    prefix: String,
    store: RedisPoolStore,
}

impl RedisHarness {
    pub async fn new() -> Self {
        Self::with_retention(Duration::from_secs(24 * 3600)).await
    }

    /// A harness whose store keeps ended records for `retention`.
    pub async fn with_retention(retention: Duration) -> Self {
        let url = std::env::var("MATCHPLANE_TEST_REDIS_URL")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379/9".into());
        let prefix = format!("mptest-{}", ulid::Ulid::new());
        let store = Self::connect(&url, &prefix, retention).await;
        Self { url, prefix, store }
    }

    async fn connect(url: &str, prefix: &str, retention: Duration) -> RedisPoolStore {
        let mut config = RedisPoolConfig::new(url);
        config.prefix = prefix.to_owned();
        config.ended_retention = retention;
        RedisPoolStore::connect(config)
            .await
            .expect("test Redis reachable (MATCHPLANE_TEST_REDIS_URL)")
    }

    pub fn store(&self) -> Arc<dyn PoolStore> {
        Arc::new(self.store.clone())
    }

    /// A second store on a new connection, as after an API restart.
    pub async fn reconnect(&self) -> RedisPoolStore {
        Self::connect(&self.url, &self.prefix, Duration::from_secs(24 * 3600)).await
    }
}

impl Drop for RedisHarness {
    fn drop(&mut self) {
        let _ = super::redis::delete_prefix_blocking(&self.url, &self.prefix);
    }
}

/// Waits for the next message of a status stream, at most a second.
pub(crate) async fn next_status(stream: &mut super::StatusStream) -> Option<String> {
    use futures::StreamExt;
    tokio::time::timeout(Duration::from_secs(1), stream.next())
        .await
        .ok()
        .flatten()
}

#[tokio::test]
async fn a_restarted_store_sees_the_same_pool() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let m = mode("ranked");
    for i in 0..50 {
        let s = solo(&format!("tkt_{i}"), &format!("p{i}"));
        store.add_search(&m, &s, FAR, None).await.unwrap();
    }
    store.record_ping(&m, "tkt_3", 42.0).await.unwrap();
    store
        .set_waiting_reasons(
            &m,
            &[("tkt_4".into(), r#"{"code":"NOT_ENOUGH_PLAYERS"}"#.into())],
        )
        .await
        .unwrap();
    let mut before = store.snapshot(&m).await.unwrap();
    drop(store);

    let restarted = harness.reconnect().await;
    let mut after = restarted.snapshot(&m).await.unwrap();
    before.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
    after.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
    assert_eq!(after.len(), 50);
    assert_eq!(before, after);
    assert_eq!(restarted.count_live("prj_a").await.unwrap(), 50);
    let Some(super::SearchState::Live(live)) = restarted.search_state(&m, "tkt_4").await.unwrap()
    else {
        panic!("tkt_4 live after restart");
    };
    assert_eq!(
        live.waiting_reason.as_deref(),
        Some(r#"{"code":"NOT_ENOUGH_PLAYERS"}"#)
    );
}

#[tokio::test]
async fn ended_records_are_kept_one_to_two_retentions() {
    let harness = RedisHarness::with_retention(Duration::from_secs(1)).await;
    let store = harness.store();
    let m = mode("ranked");
    let token = store
        .acquire_lease(&m, "w", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let claim = super::Claim {
        match_id: "mat_1".into(),
        ticket_ids: vec!["t1".into()],
        player_ids: vec!["p1".into()],
        record_json: "{}".into(),
    };
    store.claim(&m, token, &claim).await.unwrap();
    let matched = super::Ended::Matched {
        match_id: "mat_1".into(),
    };
    assert_eq!(
        store
            .search_state(&m, "t1")
            .await
            .unwrap()
            .and_then(super::SearchState::into_ended),
        Some(matched)
    );
    // Within one retention it is there whatever the bucket boundaries.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(store.search_state(&m, "t1").await.unwrap().is_some());
    let spent = store.add_search(&m, &solo("t1", "p1"), FAR, None).await;
    assert!(matches!(
        spent,
        Err(super::AddSearchError::TicketAlreadyMatched)
    ));
    // After two retentions it is gone.
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert_eq!(store.search_state(&m, "t1").await.unwrap(), None);
}

/// How long a snapshot of 100 000 searches takes, against the floor of Redis
/// alone returning the pool (HVALS). A measurement, not a rule: run with
/// `cargo test --release -p matchplane-store snapshot_of_100k -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement; run on demand in release mode"]
async fn snapshot_of_100k_searches() {
    use futures::StreamExt;
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let m = mode("big");
    let added = std::time::Instant::now();
    futures::stream::iter(0..100_000)
        .map(|i| {
            let store = store.clone();
            let m = m.clone();
            async move {
                let mut s = solo(&format!("tkt_{i:06}"), &format!("player-{i}"));
                s.mmr = Some(f64::from(i % 3000));
                store.add_search(&m, &s, FAR, None).await.unwrap();
            }
        })
        .buffer_unordered(256)
        .collect::<Vec<()>>()
        .await;
    println!("add_search x 100000: {:?}", added.elapsed());
    let mut conn = harness.store.inner_conn();
    let pool_key = format!("{}:{{prj_a}}:big:pool", harness.prefix);
    for _ in 0..3 {
        let floor = std::time::Instant::now();
        let raw: Vec<String> = redis::AsyncCommands::hvals(&mut conn, &pool_key)
            .await
            .unwrap();
        let floor = floor.elapsed();
        let timed = std::time::Instant::now();
        let snap = store.snapshot(&m).await.unwrap();
        let timed = timed.elapsed();
        assert_eq!((raw.len(), snap.len()), (100_000, 100_000));
        println!(
            "snapshot of 100000: {timed:?}; HVALS alone: {floor:?} ({:.2}x)",
            timed.as_secs_f64() / floor.as_secs_f64()
        );
    }
    // The cycle's commit: 10 000 groups of ten, claimed concurrently.
    let ttl = std::time::Duration::from_secs(60);
    let token = store
        .acquire_lease(&m, "bench", ttl)
        .await
        .unwrap()
        .unwrap();
    let cpu_before = redis_cpu(&mut conn).await;
    let claimed = std::time::Instant::now();
    let outcomes = futures::stream::iter(0..10_000)
        .map(|g| {
            let store = store.clone();
            let m = m.clone();
            async move {
                let claim = super::Claim {
                    match_id: format!("mat_{g}"),
                    ticket_ids: (0..10).map(|i| format!("tkt_{:06}", g * 10 + i)).collect(),
                    player_ids: (0..10).map(|i| format!("player-{}", g * 10 + i)).collect(),
                    record_json: format!(r#"{{"matchId":"mat_{g}"}}"#),
                };
                store.claim(&m, token, &claim).await.unwrap()
            }
        })
        .buffer_unordered(256)
        .collect::<Vec<_>>()
        .await;
    let all_claimed = outcomes
        .iter()
        .all(|o| matches!(o, super::ClaimOutcome::Claimed { .. }));
    assert!(all_claimed);
    println!(
        "claim of 10000 groups of 10: {:?} (Redis CPU {:.3}s)",
        claimed.elapsed(),
        redis_cpu(&mut conn).await - cpu_before
    );
}

/// Seconds of CPU the Redis server has used (user + system).
async fn redis_cpu(conn: &mut redis::aio::ConnectionManager) -> f64 {
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .filter(|l| l.starts_with("used_cpu_user:") || l.starts_with("used_cpu_sys:"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse::<f64>().ok())
        .sum()
}
