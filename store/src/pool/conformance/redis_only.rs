//! Cases of the Redis store alone: what survives a reconnect, how long
//! ended records are kept, and a measurement of a large snapshot.

use std::time::Duration;

use crate::pool::redis::RedisConn as ConnectionManager;

use super::{mode, solo, RedisHarness, FAR};
use crate::pool::{PoolReads, Searches};

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
    let Some(crate::pool::SearchState::Live(live)) =
        restarted.search_state(&m, "tkt_4").await.unwrap()
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
    let claim = crate::pool::Claim {
        match_id: "mat_1".into(),
        ticket_ids: vec!["t1".into()],
        player_ids: vec!["p1".into()],
        record_json: "{}".into(),
    };
    store.claim(&m, token, &claim).await.unwrap();
    let matched = crate::pool::Ended::Matched {
        match_id: "mat_1".into(),
    };
    assert_eq!(
        store
            .search_state(&m, "t1")
            .await
            .unwrap()
            .and_then(crate::pool::SearchState::into_ended),
        Some(matched)
    );
    // Within one retention it is there whatever the bucket boundaries.
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(store.search_state(&m, "t1").await.unwrap().is_some());
    let spent = store.add_search(&m, &solo("t1", "p1"), FAR, None).await;
    assert!(matches!(
        spent,
        Err(crate::pool::AddSearchError::TicketAlreadyMatched)
    ));
    // After two retentions it is gone.
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert_eq!(store.search_state(&m, "t1").await.unwrap(), None);
}

#[tokio::test]
async fn the_registry_forgets_an_empty_project_only_after_the_grace() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let mut conn = harness.store.inner_conn();
    let registry = format!("{}:projects", harness.prefix);
    async fn score(conn: &mut ConnectionManager, registry: &str, project: &str) -> Option<f64> {
        redis::AsyncCommands::zscore(conn, registry, project)
            .await
            .unwrap()
    }
    let (emptied, busy) = (mode("ranked"), crate::pool::ModeKey::new("prj_b", "solo"));
    store
        .add_search(&emptied, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&busy, &solo("t2", "p2"), FAR, None)
        .await
        .unwrap();
    store
        .end_search(&emptied, "t1", &crate::pool::EndOutcome::Cancelled)
        .await
        .unwrap();
    // Emptied a moment ago: not listed, but still registered.
    assert_eq!(store.projects_with_searches().await.unwrap(), ["prj_b"]);
    assert!(score(&mut conn, &registry, "prj_a").await.is_some());
    // Last added long ago: an empty project goes, a busy one stays.
    for project in ["prj_a", "prj_b"] {
        let () = redis::AsyncCommands::zadd(&mut conn, &registry, project, 1.0)
            .await
            .unwrap();
    }
    assert_eq!(store.projects_with_searches().await.unwrap(), ["prj_b"]);
    assert_eq!(score(&mut conn, &registry, "prj_a").await, None);
    assert_eq!(score(&mut conn, &registry, "prj_b").await, Some(1.0));
    // A new search registers it again (from a process that did not write
    // it lately: this one trusts its write of a moment ago).
    let other = harness.reconnect().await;
    Searches::add_search(&other, &emptied, &solo("t3", "p3"), FAR, None)
        .await
        .unwrap();
    assert!(score(&mut conn, &registry, "prj_a")
        .await
        .is_some_and(|s| s > 1.0));
    assert_eq!(
        store.projects_with_searches().await.unwrap(),
        ["prj_a", "prj_b"]
    );
}

#[tokio::test]
async fn an_add_registers_its_project_when_redis_lost_the_script() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let mut conn = harness.store.inner_conn();
    // As after a Redis restart: every process's scripts reload themselves.
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut conn)
        .await
        .unwrap();
    store
        .add_search(&mode("ranked"), &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    assert_eq!(store.projects_with_searches().await.unwrap(), ["prj_a"]);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 1);
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
    let pool_key = crate::pool::redis::keys::ModeKeys::new(&harness.prefix, &m).pool;
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
                let claim = crate::pool::Claim {
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
        .all(|o| matches!(o, crate::pool::ClaimOutcome::Claimed { .. }));
    assert!(all_claimed);
    println!(
        "claim of 10000 groups of 10: {:?} (Redis CPU {:.3}s)",
        claimed.elapsed(),
        redis_cpu(&mut conn).await - cpu_before
    );
}

/// Seconds of CPU the Redis server has used (user + system).
async fn redis_cpu(conn: &mut ConnectionManager) -> f64 {
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

/// Redis loses its data (a restart without persistence): the fence counter
/// starts again, yet the worker that held the lease before cannot renew or
/// claim under the lease another worker takes afterwards.
#[tokio::test]
async fn a_lost_fence_counter_repeats_no_token() {
    use crate::pool::ClaimOutcome;
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let m = mode("ranked");
    let ttl = Duration::from_secs(30);
    let a = store
        .acquire_lease_in_epoch(&m, "worker-a", 3, ttl)
        .await
        .unwrap()
        .unwrap();
    super::super::redis::delete_prefix_blocking(&harness.url, &harness.prefix).unwrap();
    let b = store
        .acquire_lease_in_epoch(&m, "worker-b", 4, ttl)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(a, b, "the counter restarted, the tokens differ");
    assert!(!store.renew_lease(&m, a, ttl).await.unwrap(), "a lost it");
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let claim = crate::pool::Claim {
        match_id: "mat_a".into(),
        ticket_ids: vec!["t1".into()],
        player_ids: vec!["p1".into()],
        record_json: "{}".into(),
    };
    assert_eq!(
        store.claim(&m, a, &claim).await.unwrap(),
        ClaimOutcome::LeaseLost
    );
    assert!(store.renew_lease(&m, b, ttl).await.unwrap(), "b holds it");
}

/// Each worker start reads the outbox under a new consumer name: the
/// consumers of workers gone (idle, nothing pending) are removed by the
/// next read, once what they held is taken over.
#[tokio::test]
async fn dead_outbox_consumers_are_removed() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let mut conn = harness.store.inner_conn();
    let m = mode("ranked");
    let token = super::lease(store.as_ref(), &m).await;
    super::add_solos(store.as_ref(), &m, 6).await;
    let idle = Duration::from_millis(150);
    for (i, pair) in [["t1", "t2"], ["t3", "t4"], ["t5", "t6"]]
        .iter()
        .enumerate()
    {
        store
            .claim(&m, token, &super::claim_of(&format!("mat_{i}"), pair))
            .await
            .unwrap();
    }
    // Three workers each take an entry and die before acknowledging it.
    for dead in ["c1", "c2", "c3"] {
        assert_eq!(store.read_outbox(&m, dead, 1, idle).await.unwrap().len(), 1);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let outbox = crate::pool::redis::keys::ModeKeys::new(&harness.prefix, &m).outbox;
    let names = |conn: &mut ConnectionManager| {
        let (mut conn, outbox) = (conn.clone(), outbox.clone());
        async move {
            let reply: Vec<redis::Value> = redis::cmd("XINFO")
                .arg("CONSUMERS")
                .arg(&outbox)
                .arg("outbox")
                .query_async(&mut conn)
                .await
                .unwrap();
            let mut names: Vec<String> = reply
                .into_iter()
                .map(|c| {
                    let fields: Vec<redis::Value> = redis::from_redis_value(c).unwrap();
                    redis::from_redis_value(fields[1].clone()).unwrap()
                })
                .collect();
            names.sort();
            names
        }
    };
    assert_eq!(names(&mut conn).await, ["c1", "c2", "c3"]);
    // c4 takes their entries over (XAUTOCLAIM): they then hold nothing, and
    // the same read removes them.
    let taken = store.read_outbox(&m, "c4", 10, idle).await.unwrap();
    assert_eq!(taken.len(), 3);
    assert_eq!(names(&mut conn).await, ["c4"]);
}

/// `INFO` on a cluster is answered by every master (a map of node → text):
/// the start-up persistence check reads it there as on one node, rather
/// than failing and warning that it cannot tell.
#[tokio::test]
async fn persistence_is_read_on_a_node_and_on_a_cluster() {
    let node = RedisHarness::new().await;
    let on_node = node.reconnect().await.persistence().await;
    assert!(on_node.is_ok(), "{on_node:?}");
    let url = super::cluster_url();
    let cluster = RedisHarness::on(url, Duration::from_secs(3600)).await;
    let on_cluster = cluster.reconnect().await.persistence().await;
    assert!(on_cluster.is_ok(), "{on_cluster:?}");
}

/// On a cluster, status messages reach a subscriber whichever seed of the
/// URL is down: the subscription rides the cluster's own connection, not
/// the first seed. Before, it opened a connection to the first seed only,
/// so with that node down (a master failed over to its replica) every
/// subscription failed, and every WebSocket search start with it.
#[tokio::test]
async fn status_reaches_a_subscriber_when_the_first_seed_is_down() {
    use crate::pool::StatusBus;
    use futures::StreamExt;
    let url = super::cluster_url();
    // A port nothing listens on, named first.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = match url.strip_prefix("redis+cluster://") {
        Some(rest) => format!("redis+cluster://127.0.0.1:{dead},{rest}"),
        None => format!("redis://127.0.0.1:{dead},{url}"),
    };
    let cluster = RedisHarness::on(url, Duration::from_secs(3600)).await;
    let store = cluster.reconnect().await;
    let subscribed = tokio::time::timeout(Duration::from_secs(10), store.subscribe_status("t1"));
    let mut updates = subscribed
        .await
        .expect("the subscription answers")
        .expect("the subscription holds");
    store.publish_status("t1", r#"{"type":"x"}"#).await.unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(10), updates.next()).await;
    assert_eq!(heard.unwrap().as_deref(), Some(r#"{"type":"x"}"#));
}
