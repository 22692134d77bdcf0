//! Cases of [`crate::pool::Outbox`]: a dead consumer's entries are taken
//! over.

use std::sync::Arc;
use std::time::Duration;

use super::{add_solos, claim_of, lease, mode};
use crate::pool::PoolStore;

pub async fn outbox_entries_of_a_dead_consumer_are_taken_over(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 4).await;
    store
        .claim(&m, token, &claim_of("mat_1", &["t1", "t2"]))
        .await
        .unwrap();
    store
        .claim(&m, token, &claim_of("mat_2", &["t3", "t4"]))
        .await
        .unwrap();
    let idle = Duration::from_millis(150);

    // c1 takes one and dies before acknowledging it.
    let c1 = store.read_outbox(&m, "c1", 1, idle).await.unwrap();
    assert_eq!(c1.len(), 1);
    assert_eq!(c1[0].match_id, "mat_1");
    let c2 = store.read_outbox(&m, "c2", 10, idle).await.unwrap();
    let ids: Vec<&str> = c2.iter().map(|e| e.match_id.as_str()).collect();
    assert_eq!(ids, vec!["mat_2"], "c1's entry is not idle yet");
    let c2_ids: Vec<String> = c2.iter().map(|e| e.id.clone()).collect();
    store.ack_outbox(&m, &c2_ids).await.unwrap();

    tokio::time::sleep(Duration::from_millis(250)).await;
    let taken = store.read_outbox(&m, "c2", 10, idle).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].id, c1[0].id);
    assert_eq!(taken[0].record_json, c1[0].record_json);
    assert_eq!(
        store.ack_outbox(&m, &[taken[0].id.clone()]).await.unwrap(),
        1
    );
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(store
        .read_outbox(&m, "c3", 10, idle)
        .await
        .unwrap()
        .is_empty());
}

/// A consumer's own entries it did not acknowledge (a store that failed)
/// come back at its next read, without waiting `min_idle`; another
/// consumer still waits for them to be idle.
pub async fn a_consumer_reads_its_own_unacknowledged_entries_again_at_once(
    store: Arc<dyn PoolStore>,
) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 4).await;
    for (id, tickets) in [("mat_1", ["t1", "t2"]), ("mat_2", ["t3", "t4"])] {
        store
            .claim(&m, token, &claim_of(id, &tickets))
            .await
            .unwrap();
    }
    let long = Duration::from_secs(600);
    let first = store.read_outbox(&m, "c1", 1, long).await.unwrap();
    assert_eq!(first.len(), 1);
    // Its own entry again, first, then the next new one; nothing twice.
    let again = store.read_outbox(&m, "c1", 10, long).await.unwrap();
    let ids: Vec<&str> = again.iter().map(|e| e.match_id.as_str()).collect();
    assert_eq!(ids, ["mat_1", "mat_2"]);
    assert_eq!(again[0].id, first[0].id);
    assert!(store
        .read_outbox(&m, "c2", 10, long)
        .await
        .unwrap()
        .is_empty());
    let acked: Vec<String> = again.iter().map(|e| e.id.clone()).collect();
    assert_eq!(store.ack_outbox(&m, &acked).await.unwrap(), 2);
    assert!(store
        .read_outbox(&m, "c1", 10, long)
        .await
        .unwrap()
        .is_empty());
}
