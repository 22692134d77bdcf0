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
    // Each search's deadline, in one read; none for a ticket never added.
    assert_eq!(store.deadline(&duel, "d1").await.unwrap(), Some(10.0));
    assert_eq!(store.deadline(&ranked, "r1").await.unwrap(), Some(FAR));
    assert_eq!(store.deadline(&duel, "r1").await.unwrap(), None);
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
