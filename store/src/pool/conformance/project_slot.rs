//! Cases of the Redis store's project side (`pool/redis/live.rs`): a
//! project's counter repaired after an add that stopped between its steps,
//! the `project` scope's reservations left behind, and one project's modes
//! on several masters of a cluster.

use std::time::Duration;

use super::{cluster_url, lease, mode, solo, RedisHarness, FAR};
use crate::pool::redis::keys::{player_key, ModeKeys};
use crate::pool::redis::RedisPoolStore;
use crate::pool::types::wall_clock;
use crate::pool::{AddSearchError, Leases, PlayerSearchScope};

/// Adds `ticket` of `player` in `m` with the add script alone, as a process
/// that stopped after the add and before the project's count.
async fn add_without_the_project(store: &RedisPoolStore, m: &crate::pool::ModeKey, ticket: &str) {
    let keys = ModeKeys::new(store.prefix(), m);
    let entry = serde_json::to_string(&solo(ticket, &format!("{ticket}-player"))).unwrap();
    let [current, next, previous] = keys.ended(1);
    let reply: Vec<String> = redis::Script::new(concat!(
        include_str!("../redis/scripts/common.lua"),
        include_str!("../redis/scripts/add_search.lua")
    ))
    .key(&keys.pool)
    .key(&keys.players)
    .key(&keys.deadlines)
    .key(current)
    .key(next)
    .key(previous)
    .key(&keys.version)
    .key(&keys.revoked)
    .key(&keys.proposals)
    .key(&keys.proposed)
    .key(&keys.leaving)
    .key(&keys.cooldowns)
    .arg(ticket)
    .arg(format!("{ticket}-player"))
    .arg(entry)
    .arg(FAR)
    .arg(&m.mode)
    .arg("")
    .arg("")
    .arg("")
    .arg(wall_clock())
    .invoke_async(&mut store.inner_conn())
    .await
    .unwrap();
    assert_eq!(reply[0], "ok");
}

#[tokio::test]
async fn the_worker_repairs_a_count_an_interrupted_add_left_behind() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let m = mode("ranked");
    store
        .add_search(&m, &solo("t1", "p1"), FAR, Some(10))
        .await
        .unwrap();
    // A second process (its own store, as another API replica) adds and
    // stops before the project's step.
    let other = harness.reconnect().await;
    add_without_the_project(&other, &m, "t2").await;
    assert_eq!(
        store.count_live("prj_a").await.unwrap(),
        1,
        "behind its pool"
    );
    // The mode's worker probes: the pool's size differs from what it
    // applied, so it measures and applies again.
    let worker = harness.reconnect().await;
    let token = lease(&worker, &m).await;
    let activity = worker
        .renew_lease_and_probe(&m, token, Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(activity.searches, 2);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2, "repaired");
    // An idle probe changes nothing.
    worker
        .renew_lease_and_probe(&m, token, Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    // Under the `mode` scope an add's mode is listed by its project's step:
    // one interrupted before it, in a mode with no search yet, is listed
    // by the mode's worker too.
    let casual = mode("casual");
    add_without_the_project(&other, &casual, "t3").await;
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["ranked"]
    );
    let token = lease(&worker, &casual).await;
    worker
        .renew_lease_and_probe(&casual, token, Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["casual", "ranked"]
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 3);
}

/// What the API does before deleting a mode: a search an interrupted add
/// left out of the project's list of modes is listed, so the sweep that
/// fails a deleted mode's searches finds it; counting again changes
/// nothing when nothing was left behind.
#[tokio::test]
async fn a_recount_lists_a_search_an_interrupted_add_left_out() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let ranked = mode("ranked");
    store
        .add_search(&ranked, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let casual = mode("casual");
    let other = harness.reconnect().await;
    add_without_the_project(&other, &casual, "t2").await;
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["ranked"]
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 1);

    store.recount(&casual).await.unwrap();
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["casual", "ranked"]
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    store.recount(&ranked).await.unwrap();
    store.recount(&mode("never_used")).await.unwrap();
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["casual", "ranked"]
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
}

#[tokio::test]
async fn a_late_measurement_never_undoes_a_newer_one() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let m = mode("ranked");
    for i in 0..3 {
        store
            .add_search(&m, &solo(&format!("t{i}"), &format!("p{i}")), FAR, None)
            .await
            .unwrap();
    }
    // Many ends and adds at once, each measuring and applying on its own:
    // whatever order their applications land in, the count is the pool's.
    let ends = (0..3).map(|i| {
        let store = store.clone();
        let m = m.clone();
        tokio::spawn(async move {
            store
                .end_search(&m, &format!("t{i}"), &crate::pool::EndOutcome::Cancelled)
                .await
                .unwrap();
        })
    });
    let adds = (3..12).map(|i| {
        let store = store.clone();
        let m = m.clone();
        tokio::spawn(async move {
            store
                .add_search(&m, &solo(&format!("t{i}"), &format!("p{i}")), FAR, None)
                .await
                .unwrap();
        })
    });
    for task in ends.chain(adds).collect::<Vec<_>>() {
        task.await.unwrap();
    }
    assert_eq!(store.count_live("prj_a").await.unwrap(), 9);
    assert_eq!(store.snapshot(&m).await.unwrap().len(), 9);
}

#[tokio::test]
async fn a_reservation_left_behind_holds_a_player_only_while_a_start_could_be_in_flight() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let (ranked, casual) = (mode("ranked"), mode("casual"));
    let project = crate::pool::PlayerSearchScope::Project;
    let conn = || harness.reconnect();
    let key = player_key(&harness.prefix, "prj_a", "p1");
    // A start in `ranked` that reserved the player a moment ago and has not
    // added its search yet: `casual` is refused, naming it.
    let now = wall_clock().floor() as i64;
    let () = redis::cmd("SET")
        .arg(&key)
        .arg(format!("ranked|t_starting|{now}"))
        .query_async(&mut conn().await.inner_conn())
        .await
        .unwrap();
    let refused = store
        .add_search_scoped(&casual, &solo("t2", "p1"), FAR, None, project, false)
        .await;
    match refused {
        Err(AddSearchError::PlayerAlreadySearching {
            ticket_id,
            game_mode,
        }) => assert_eq!(
            (ticket_id.as_str(), game_mode.as_str()),
            ("t_starting", "ranked")
        ),
        other => panic!("expected PLAYER_ALREADY_SEARCHING, got {other:?}"),
    }
    // The same reservation, older than a start can take and with no search
    // behind it (its process stopped): taken over.
    let () = redis::cmd("SET")
        .arg(&key)
        .arg(format!("ranked|t_starting|{}", now - 120))
        .query_async(&mut conn().await.inner_conn())
        .await
        .unwrap();
    store
        .add_search_scoped(&casual, &solo("t2", "p1"), FAR, None, project, false)
        .await
        .unwrap();
    // Now `casual` holds the player, and `ranked` is refused.
    let refused = store
        .add_search_scoped(&ranked, &solo("t3", "p1"), FAR, None, project, false)
        .await;
    assert!(
        matches!(refused, Err(AddSearchError::PlayerAlreadySearching { ref ticket_id, .. }) if ticket_id == "t2"),
        "{refused:?}"
    );
    // A refused add gave nothing back that was not its own, and registered
    // no mode it has no search in.
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["casual"]
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 1);
    // Ended in `casual`: free in `ranked` at once (its ended record says so).
    store
        .end_search(&casual, "t2", &crate::pool::EndOutcome::Cancelled)
        .await
        .unwrap();
    store
        .add_search_scoped(
            &ranked,
            &solo("t3", "p1"),
            FAR,
            None,
            PlayerSearchScope::Project,
            false,
        )
        .await
        .unwrap();
}

/// A ticket whose search ended (a released match's, or one cancelled)
/// starting again in its mode writes its reservation anew: a start in
/// another mode at that moment sees a start in flight, not the ended
/// search, and is refused, so the player is never live in both.
#[tokio::test]
async fn a_ticket_starting_again_after_its_search_ended_holds_its_player() {
    let harness = RedisHarness::new().await;
    let store = harness.store();
    let (ranked, casual) = (mode("ranked"), mode("casual"));
    let project = PlayerSearchScope::Project;
    let key = player_key(&harness.prefix, "prj_a", "p1");
    store
        .add_search_scoped(&ranked, &solo("t1", "p1"), FAR, None, project, false)
        .await
        .unwrap();
    store
        .end_search(&ranked, "t1", &crate::pool::EndOutcome::Cancelled)
        .await
        .unwrap();
    // t1's start again reserved the player just now (after the end), and
    // has not added its search yet.
    let now = wall_clock() + 0.5;
    let () = redis::cmd("SET")
        .arg(&key)
        .arg(format!("ranked|t1|{now}"))
        .query_async(&mut harness.reconnect().await.inner_conn())
        .await
        .unwrap();
    let refused = store
        .add_search_scoped(&casual, &solo("t2", "p1"), FAR, None, project, false)
        .await;
    assert!(
        matches!(refused, Err(AddSearchError::PlayerAlreadySearching { ref ticket_id, .. }) if ticket_id == "t1"),
        "{refused:?}"
    );
    // Its old reservation (from before the end) no longer holds anyone.
    let () = redis::cmd("SET")
        .arg(&key)
        .arg(format!("ranked|t1|{}", now - 5.0))
        .query_async(&mut harness.reconnect().await.inner_conn())
        .await
        .unwrap();
    store
        .add_search_scoped(&casual, &solo("t2", "p1"), FAR, None, project, false)
        .await
        .unwrap();
}

#[tokio::test]
async fn one_projects_modes_spread_over_the_clusters_masters() {
    let url = cluster_url();
    let harness = RedisHarness::on(url, Duration::from_secs(24 * 3600)).await;
    let store = harness.store();
    let modes: Vec<_> = ["ranked", "casual", "arena", "duel"]
        .into_iter()
        .map(mode)
        .collect();
    for (i, m) in modes.iter().enumerate() {
        store
            .add_search(m, &solo(&format!("t{i}"), &format!("p{i}")), FAR, Some(4))
            .await
            .unwrap();
    }
    // At the quota, counted over every master: refused in each mode.
    for m in &modes {
        let over = store.add_search(m, &solo("t9", "p9"), FAR, Some(4)).await;
        assert!(
            matches!(over, Err(AddSearchError::QuotaExceeded { limit: 4 })),
            "{}: {over:?}",
            m.mode
        );
    }
    // The pools sit in at least two different masters' slots.
    let mut conn = harness.reconnect().await.inner_conn();
    let mut slots = std::collections::BTreeSet::new();
    for m in &modes {
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(ModeKeys::new(&harness.prefix, m).pool)
            .query_async(&mut conn)
            .await
            .unwrap();
        slots.insert(slot);
    }
    let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut conn)
        .await
        .unwrap();
    let owner = |slot: u16| -> String {
        for range in &ranges {
            if let redis::Value::Array(parts) = range {
                let (Some(redis::Value::Int(from)), Some(redis::Value::Int(to))) =
                    (parts.first(), parts.get(1))
                else {
                    continue;
                };
                if (*from..=*to).contains(&i64::from(slot)) {
                    return format!("{:?}", parts.get(2));
                }
            }
        }
        panic!("slot {slot} has no owner")
    };
    let masters: std::collections::BTreeSet<String> = slots.iter().map(|s| owner(*s)).collect();
    assert!(masters.len() >= 2, "one project's modes on {masters:?}");
    assert_eq!(store.count_live("prj_a").await.unwrap(), 4);
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        ["arena", "casual", "duel", "ranked"]
    );
}
