//! Cases of [`crate::pool::PoolReads`] beyond a single search: where a
//! project's searches are, and which projects have any.

use std::sync::Arc;
use std::time::Duration;

use super::{claim_of, mode, solo, FAR};
use crate::pool::{EndOutcome, ModeKey, PoolStore};

pub async fn modes_with_searches_follow_the_pools(store: Arc<dyn PoolStore>) {
    let (ranked, casual, duel) = (mode("ranked"), mode("casual"), mode("duel"));
    let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(store.modes_with_searches("prj_a").await.unwrap().is_empty());
    store
        .add_search(&ranked, &solo("r1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&ranked, &solo("r2", "p2"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&casual, &solo("c1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&duel, &solo("d1", "p1"), 10.0, None)
        .await
        .unwrap();
    let foreign = ModeKey::new("prj_b", "solo");
    store
        .add_search(&foreign, &solo("f1", "p1"), FAR, None)
        .await
        .unwrap();
    let all = store.modes_with_searches("prj_a").await.unwrap();
    assert_eq!(all, names(&["casual", "duel", "ranked"]));
    assert_eq!(
        store.modes_with_searches("prj_b").await.unwrap(),
        names(&["solo"])
    );

    // Emptied by an end, an expiry, a claim: the mode leaves the set.
    store
        .end_search(&casual, "c1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    store.expire_due(&duel, 20.0, 10).await.unwrap();
    let left = store.modes_with_searches("prj_a").await.unwrap();
    assert_eq!(left, names(&["ranked"]));
    let ttl = Duration::from_secs(30);
    let token = store
        .acquire_lease(&ranked, "w", ttl)
        .await
        .unwrap()
        .unwrap();
    let one = claim_of("mat_1", &["r1"]);
    store.claim(&ranked, token, &one).await.unwrap();
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        names(&["ranked"])
    );
    store
        .claim(&ranked, token, &claim_of("mat_2", &["r2"]))
        .await
        .unwrap();
    assert!(store.modes_with_searches("prj_a").await.unwrap().is_empty());
}

pub async fn projects_with_searches_follow_the_pools(store: Arc<dyn PoolStore>) {
    let (ranked, casual) = (mode("ranked"), mode("casual"));
    let foreign = ModeKey::new("prj_b", "solo");
    assert!(store.projects_with_searches().await.unwrap().is_empty());
    store
        .add_search(&ranked, &solo("r1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&casual, &solo("c1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&foreign, &solo("f1", "p1"), 10.0, None)
        .await
        .unwrap();
    assert_eq!(
        store.projects_with_searches().await.unwrap(),
        ["prj_a", "prj_b"]
    );

    // Emptied by an expiry, an end, a claim: the project is no longer
    // listed; a new search lists it again.
    store.expire_due(&foreign, 20.0, 10).await.unwrap();
    assert_eq!(store.projects_with_searches().await.unwrap(), ["prj_a"]);
    store
        .end_search(&ranked, "r1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    assert_eq!(store.projects_with_searches().await.unwrap(), ["prj_a"]);
    let token = store
        .acquire_lease(&casual, "w", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    store
        .claim(&casual, token, &claim_of("mat_1", &["c1"]))
        .await
        .unwrap();
    assert!(store.projects_with_searches().await.unwrap().is_empty());
    store
        .add_search(&foreign, &solo("f2", "p2"), FAR, None)
        .await
        .unwrap();
    assert_eq!(store.projects_with_searches().await.unwrap(), ["prj_b"]);
}

/// A snapshot that keeps its parsed searches for the next
/// ([`crate::pool::PoolReads::snapshot_kept`], the worker's) reads what a
/// fresh snapshot reads while the pool changes under it: searches added
/// and ended, a ping measured, searches held by a proposal.
pub async fn a_kept_snapshot_reads_as_a_fresh_one(store: Arc<dyn PoolStore>) {
    use super::proposals::{proposal, NOW};
    use super::sorted;
    let m = mode("ranked");
    let mut kept = crate::pool::KeptSearches::default();
    for (t, p) in [("t1", "p1"), ("t2", "p2"), ("t3", "p3")] {
        store
            .add_search(&m, &solo(t, p), NOW - 1.0, None)
            .await
            .unwrap();
    }
    let first = store.snapshot_kept(&m, &mut kept).await.unwrap();
    assert_eq!(sorted(first), sorted(store.snapshot(&m).await.unwrap()));

    store.record_ping(&m, "t1", 40.0).await.unwrap();
    store
        .end_search(&m, "t2", &EndOutcome::Cancelled)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("t4", "p4"), NOW - 1.0, None)
        .await
        .unwrap();
    let second = sorted(store.snapshot_kept(&m, &mut kept).await.unwrap());
    assert_eq!(second, sorted(store.snapshot(&m).await.unwrap()));
    let ids: Vec<&str> = second.iter().map(|s| s.ticket_id.as_str()).collect();
    assert_eq!(ids, ["t1", "t3", "t4"]);
    assert_eq!(
        second[0].ping_ms,
        Some(40.0),
        "a kept search reads its new ping"
    );

    let token = super::lease(store.as_ref(), &m).await;
    store
        .propose_many(&m, token, &[proposal("mat_1", &["t3", "t4"], &[])])
        .await
        .unwrap();
    let third = sorted(store.snapshot_kept(&m, &mut kept).await.unwrap());
    assert_eq!(third, sorted(store.snapshot(&m).await.unwrap()));
    assert_eq!(third.len(), 1, "held searches stay out of a kept snapshot");
    // A store that parses entries keeps every live one (held ones too, for
    // when their proposal ends); one that holds its searches parsed keeps
    // none.
    assert!(kept.is_empty() || kept.len() == 3, "{}", kept.len());
}
