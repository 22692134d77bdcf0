//! Cases of [`crate::pool::Leases`]: fencing tokens that only grow, and
//! claims refused under a stale one.

use std::sync::Arc;
use std::time::Duration;

use super::{add_solos, claim_of, mode};
use crate::pool::{ClaimOutcome, PoolStore};

pub async fn claim_refused_under_a_stale_fencing_token(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 4).await;
    let none = store
        .claim(&m, 1, &claim_of("mat_0", &["t1"]))
        .await
        .unwrap();
    assert_eq!(none, ClaimOutcome::LeaseLost, "no lease at all");

    let short = Duration::from_millis(200);
    let a = store
        .acquire_lease(&m, "worker-a", short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.acquire_lease(&m, "worker-b", short).await.unwrap(),
        None
    );
    // Worker A pauses past its lease; B takes the mode over.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let long = Duration::from_secs(30);
    let b = store
        .acquire_lease(&m, "worker-b", long)
        .await
        .unwrap()
        .unwrap();
    assert!(b > a, "fencing tokens grow: {a} then {b}");

    let late = store
        .claim(&m, a, &claim_of("mat_a", &["t1", "t2"]))
        .await
        .unwrap();
    assert_eq!(late, ClaimOutcome::LeaseLost);
    assert_eq!(store.snapshot(&m).await.unwrap().len(), 4);
    assert!(!store.renew_lease(&m, a, long).await.unwrap());
    assert!(!store.release_lease(&m, a).await.unwrap());

    let fresh = store
        .claim(&m, b, &claim_of("mat_b", &["t1", "t2"]))
        .await
        .unwrap();
    assert!(matches!(fresh, ClaimOutcome::Claimed { .. }), "{fresh:?}");
    assert!(store.renew_lease(&m, b, long).await.unwrap());
    assert!(store.release_lease(&m, b).await.unwrap());
    // Released: the next owner gets the mode at once, with a newer token.
    let c = store
        .acquire_lease(&m, "worker-a", long)
        .await
        .unwrap()
        .unwrap();
    assert!(c > b);
    let stale = store
        .claim(&m, b, &claim_of("mat_c", &["t3", "t4"]))
        .await
        .unwrap();
    assert_eq!(stale, ClaimOutcome::LeaseLost);
    let outbox = store.read_outbox(&m, "c", 10, long).await.unwrap();
    let matches: Vec<&str> = outbox.iter().map(|e| e.match_id.as_str()).collect();
    assert_eq!(matches, vec!["mat_b"]);
}

/// Tokens of two epochs (two worker starts) never meet, and one of them
/// renews, releases or claims nothing under the other's lease.
pub async fn tokens_of_two_epochs_never_meet(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    let short = Duration::from_millis(200);
    let a = store
        .acquire_lease_in_epoch(&m, "worker-a", 7, short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a >> 32, 7, "a token carries its epoch: {a}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let long = Duration::from_secs(30);
    let b = store
        .acquire_lease_in_epoch(&m, "worker-b", 8, long)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(b >> 32, 8);
    assert_ne!(a & 0xffff_ffff, 0);
    assert!(!store.renew_lease(&m, a, long).await.unwrap());
    let late = store
        .claim(&m, a, &claim_of("mat_a", &["t1", "t2"]))
        .await
        .unwrap();
    assert_eq!(late, ClaimOutcome::LeaseLost);
    assert!(store.renew_lease(&m, b, long).await.unwrap());
    assert!(store.release_lease(&m, b).await.unwrap());
}

/// The probe renews like [`crate::pool::Leases::renew_lease`] and counts
/// what the mode holds; under a stale token it renews nothing.
pub async fn the_lease_probe_renews_and_counts(store: Arc<dyn PoolStore>) {
    let m = mode("probed");
    let short = Duration::from_millis(300);
    let token = store
        .acquire_lease(&m, "worker-a", short)
        .await
        .unwrap()
        .unwrap();
    let idle = store
        .renew_lease_and_probe(&m, token, short)
        .await
        .unwrap()
        .expect("held");
    assert!(idle.is_idle(), "{idle:?}");
    add_solos(store.as_ref(), &m, 3).await;
    let busy = store
        .renew_lease_and_probe(&m, token, short)
        .await
        .unwrap()
        .expect("held");
    assert_eq!(busy.searches, 3);
    assert!(!busy.is_idle());
    let claimed = store
        .claim(&m, token, &claim_of("mat_p", &["t1", "t2"]))
        .await
        .unwrap();
    assert!(
        matches!(claimed, ClaimOutcome::Claimed { .. }),
        "{claimed:?}"
    );
    let after = store
        .renew_lease_and_probe(&m, token, short)
        .await
        .unwrap()
        .expect("held");
    assert_eq!((after.searches, after.outbox), (1, 1), "{after:?}");
    // Renewed: still held past the first ttl, with probes inside it.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(store
            .renew_lease_and_probe(&m, token, short)
            .await
            .unwrap()
            .is_some());
    }
    assert_eq!(
        store.acquire_lease(&m, "worker-b", short).await.unwrap(),
        None
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        store.renew_lease_and_probe(&m, token, short).await.unwrap(),
        None,
        "lapsed"
    );
    let other = store
        .acquire_lease(&m, "worker-b", short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.renew_lease_and_probe(&m, token, short).await.unwrap(),
        None,
        "someone else's"
    );
    assert!(store
        .renew_lease_and_probe(&m, other, short)
        .await
        .unwrap()
        .is_some());
}

/// Heartbeats list the live workers; one that stops beating drops out
/// after its ttl, one that leaves at once.
pub async fn workers_heartbeat_lapse_and_leave(store: Arc<dyn PoolStore>) {
    let short = Duration::from_millis(300);
    let long = Duration::from_secs(30);
    assert_eq!(
        store.worker_heartbeat("wrk_b", short).await.unwrap(),
        ["wrk_b"]
    );
    assert_eq!(
        store.worker_heartbeat("wrk_a", long).await.unwrap(),
        ["wrk_a", "wrk_b"]
    );
    assert_eq!(
        store.worker_heartbeat("wrk_c", long).await.unwrap(),
        ["wrk_a", "wrk_b", "wrk_c"]
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        store.worker_heartbeat("wrk_a", long).await.unwrap(),
        ["wrk_a", "wrk_c"],
        "wrk_b lapsed"
    );
    store.worker_leave("wrk_c").await.unwrap();
    assert_eq!(
        store.worker_heartbeat("wrk_a", long).await.unwrap(),
        ["wrk_a"]
    );
}
